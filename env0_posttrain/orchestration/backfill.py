"""Backfills for new teachers: one cloned run spec per teacher, one Dagster asset backfill over them.

A backfill is recorded in the instance exactly as the UI's "Launch backfill" records one
(a REQUESTED `PartitionBackfill` with asset backfill data), so the daemon of `dagster dev` (or a
deployed daemon) runs it and the UI's Backfills page shows it. Nothing needs the web server to be up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from dagster._core.definitions.assets.graph.base_asset_graph import BaseAssetGraph
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.utils import make_new_backfill_id
from dagster._time import get_current_timestamp

from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.paths import Paths
from env0_posttrain.runspec import RunSpec, SpecError, load_spec, write_spec
from env0_posttrain.digests import sha256_hex

MAX_RUN_ID = 128
BACKFILL_TAG = "env0/backfill"
SOURCE_TAG = "env0/from_run"


class BackfillError(ValueError):
    """A backfill that cannot be launched; nothing was written or launched."""


@dataclass(frozen=True)
class BackfillInfo:
    backfill_id: str
    source_run_id: str
    run_ids: list[str]
    spec_paths: list[Path]
    new_partitions: list[str]
    asset_keys: list[str]
    status: str
    teachers: dict[str, str] = field(default_factory=dict)  # run id -> teacher model


def teacher_slug(model: str) -> str:
    """'openrouter/qwen/qwen3:free' -> 'openrouter-qwen-qwen3-free': only Dagster-safe key characters."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")
    slug = re.sub(r"\.{2,}", ".", slug)  # '...' is Dagster's range syntax
    if not slug:
        raise BackfillError(f"teacher {model!r} has no characters usable in a run id")
    return slug


def teacher_run_id(source_run_id: str, model: str) -> str:
    """Deterministic: re-running a backfill for the same teacher targets the same partition."""
    run_id = f"{source_run_id}--{teacher_slug(model)}"
    if len(run_id) > MAX_RUN_ID:
        digest = sha256_hex(model, n=8)
        run_id = f"{run_id[: MAX_RUN_ID - 9]}-{digest}"
    return run_id


def clone_for_teacher(source: RunSpec, model: str) -> RunSpec:
    data = source.model_dump(mode="json")
    data["run_id"] = teacher_run_id(source.run_id, model)
    data["teacher"]["model"] = model
    data["description"] = f"teacher backfill of {source.run_id} with {model}"
    try:
        return RunSpec.model_validate(data)
    except Exception as err:  # pydantic names the field
        raise BackfillError(f"cloning {source.run_id} for teacher {model!r}: {err}") from None


def _load_source(paths: Paths, run_id: str) -> RunSpec:
    path = paths.runs / f"{run_id}.yaml"
    if path.exists():
        return load_spec(path)
    from env0_posttrain.store import Store

    if paths.db.exists():
        spec = Store(paths.db).get_run(run_id)
        if spec is not None:
            return spec
    raise BackfillError(f"source run {run_id!r}: no spec file {path} and no row in {paths.db}")


def _plan(paths: Paths, source: RunSpec, teachers: Sequence[str]) -> list[RunSpec]:
    """Validate everything before writing anything: duplicates, collisions with different specs."""
    if isinstance(teachers, str):
        raise BackfillError(f"teachers must be a list of model ids, got the string {teachers!r}")
    if not teachers:
        raise BackfillError("name at least one teacher")
    clones: dict[str, RunSpec] = {}
    for model in dict.fromkeys(teachers):  # keep order, drop exact repeats
        clone = clone_for_teacher(source, model)
        if clone.run_id in clones:
            raise BackfillError(
                f"teachers {clones[clone.run_id].teacher.model!r} and {model!r} both map to run id {clone.run_id!r}"
            )
        existing = paths.runs / f"{clone.run_id}.yaml"
        if existing.exists():
            try:
                same = load_spec(existing).digest() == clone.digest()
            except SpecError:
                same = False
            if not same:
                raise BackfillError(f"{existing} already exists with a different spec; remove it or pick another source")
        clones[clone.run_id] = clone
    return list(clones.values())


def _on_run_partitions(graph: BaseAssetGraph, key: dg.AssetKey) -> bool:
    pd = graph.get(key).partitions_def
    return isinstance(pd, dg.DynamicPartitionsDefinition) and pd.name == run_partitions.name


def default_asset_graph() -> BaseAssetGraph:
    from env0_posttrain.definitions import defs

    return defs.resolve_asset_graph()


def backfill_teachers(
    instance: dg.DagsterInstance,
    paths: Paths,
    from_run_id: str,
    teachers: list[str],
    *,
    asset_graph: BaseAssetGraph | None = None,
    asset_selection: Sequence[str] | None = None,
) -> BackfillInfo:
    """Clone `from_run_id` once per teacher, register the partitions and record a REQUESTED asset backfill.

    `asset_selection` defaults to every partitioned asset of the graph (the `full_run` assets).
    """
    source = _load_source(paths, from_run_id)
    clones = _plan(paths, source, teachers)
    graph = asset_graph or default_asset_graph()
    if asset_selection:
        keys = [dg.AssetKey.from_user_string(a) for a in asset_selection]
        missing = [k.to_user_string() for k in keys if not graph.has(k)]
        if missing:
            raise BackfillError(f"assets {missing} are not in the code location")
    else:
        keys = sorted(k for k in graph.materializable_asset_keys if _on_run_partitions(graph, k))
    if not keys:
        raise BackfillError("no asset on the run_id partitions to backfill")

    from env0_posttrain.store import Store

    spec_paths = [write_spec(c, paths.runs) for c in clones]
    store = Store(paths.db)
    for c in clones:
        store.upsert_run(c)
    run_ids = [c.run_id for c in clones]
    known = set(instance.get_dynamic_partitions(run_partitions.name))
    new = [r for r in run_ids if r not in known]
    if new:
        instance.add_dynamic_partitions(run_partitions.name, new)

    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=make_new_backfill_id(),
        asset_graph=graph,
        partition_names=run_ids,
        asset_selection=keys,
        backfill_timestamp=get_current_timestamp(),
        tags={BACKFILL_TAG: "teachers", SOURCE_TAG: source.run_id},
        dynamic_partitions_store=instance,
        all_partitions=False,
        title=f"teachers from {source.run_id}"[:100],
        description="; ".join(f"{c.run_id}: {c.teacher.model}" for c in clones)[:2000],
        run_config=None,
    )
    instance.add_backfill(backfill)
    return BackfillInfo(
        backfill_id=backfill.backfill_id,
        source_run_id=source.run_id,
        run_ids=run_ids,
        spec_paths=spec_paths,
        new_partitions=new,
        asset_keys=[k.to_user_string() for k in keys],
        status=backfill.status.value,
        teachers={c.run_id: c.teacher.model for c in clones},
    )


def backfill_status(instance: dg.DagsterInstance, backfill_id: str) -> BulkActionStatus | None:
    bf = instance.get_backfill(backfill_id)
    return bf.status if bf else None
