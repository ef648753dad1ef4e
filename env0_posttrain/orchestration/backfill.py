"""Backfills for new teachers: one cloned run spec per teacher, one Dagster asset backfill over them.

The partitions and the backfill go to the running webserver (`env0-posttrain ui`) through Dagster's public
GraphQL API (`addDynamicPartition`, `launchPartitionBackfill`), exactly as the UI's "Launch backfill" sends
them, so they land in the instance whose daemon runs them and the UI's Backfills page lists them. Everything
is checked (specs, asset keys, the server and its assets) before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.orchestration.ui_graphql import DEFAULT_UI_URL, LOCATION, UiError, UiGraphQL, UiUnreachable
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, SpecError, load_spec, write_spec
from env0_posttrain.util.digests import sha256_hex

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
    if (m := re.search(r"env0-oracle/[^/@]*@([0-9.]+)$", model)) is not None:  # the id's skill is the one that acts
        data["teacher"]["skill"] = float(m.group(1))
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


def _on_run_partitions(spec: dg.AssetSpec) -> bool:
    pd = spec.partitions_def
    return isinstance(pd, dg.DynamicPartitionsDefinition) and pd.name == run_partitions.name


def _default_defs() -> dg.Definitions:
    from env0_posttrain.definitions import defs

    return defs


def _asset_keys(defs: dg.Definitions, asset_selection: Sequence[str] | None) -> list[str]:
    specs = {s.key.to_user_string(): s for s in defs.resolve_all_asset_specs()}
    if asset_selection:
        keys = [dg.AssetKey.from_user_string(a).to_user_string() for a in asset_selection]
        missing = [k for k in keys if k not in specs]
        if missing:
            raise BackfillError(f"assets {missing} are not in the code location")
    else:
        keys = sorted(k for k, s in specs.items() if _on_run_partitions(s))
    if not keys:
        raise BackfillError("no asset on the run_id partitions to backfill")
    return keys


def _check_reachable(ui: UiGraphQL) -> None:
    try:
        ui.version()
    except UiUnreachable:
        raise BackfillError(f"nothing answers at {ui.url}: start `env0-posttrain ui` (its daemon runs backfills) "
                            "or pass --url") from None
    except UiError as err:
        raise BackfillError(str(err)) from None


def _check_server(ui: UiGraphQL, keys: list[str]) -> tuple[str, str]:
    """The server's workspace has every key, materializable on the run_id partitions: (location, repository)."""
    try:
        nodes = ui.asset_nodes(keys)
    except UiError as err:
        raise BackfillError(str(err)) from None
    missing = [k for k in keys if k not in nodes]
    if missing:
        raise BackfillError(f"the webserver at {ui.url} has no assets {missing}; is it serving this repo's workspace?")
    wrong = [k for k in keys if not nodes[k].materializable or run_partitions.name not in nodes[k].dynamic_partitions]
    if wrong:
        raise BackfillError(f"assets {wrong} at {ui.url} are not materializable on the {run_partitions.name!r} partitions")
    return nodes[keys[0]].repository


def _check_instance(ui: UiGraphQL, paths: Paths, repository: tuple[str, str], project_defs: bool) -> None:
    """The server is this data dir's instance: whatever answers at the URL (another project's Dagster, a UI
    started on another data dir) could have assets of the same names, and its daemon would run the backfill
    against other specs or none."""
    start = f"start `env0-posttrain ui --data-dir {paths.root}` or pass the --url of the one that serves it"
    if project_defs and repository[0] != LOCATION:
        raise BackfillError(f"the webserver at {ui.url} serves these assets from code location {repository[0]!r}, "
                            f"not this project's {LOCATION!r}: {start}")
    try:
        home = ui.instance_home()
    except UiError as err:
        raise BackfillError(str(err)) from None
    if home is None:
        raise BackfillError(f"the webserver at {ui.url} does not say which instance it serves (its instance config "
                            f"is hidden), so a backfill could land in another project's: {start}")
    if Path(home).resolve() != paths.dagster_home.resolve():
        raise BackfillError(f"the webserver at {ui.url} serves the Dagster instance at {home}, not this data dir's "
                            f"{paths.dagster_home}: {start}")


def backfill_teachers(
    paths: Paths,
    from_run_id: str,
    teachers: list[str],
    *,
    url: str = DEFAULT_UI_URL,
    defs: dg.Definitions | None = None,
    asset_selection: Sequence[str] | None = None,
) -> BackfillInfo:
    """Clone `from_run_id` once per teacher, register the partitions and launch one asset backfill at `url`.

    `asset_selection` defaults to every asset of `defs` (the project's) on the run_id partitions.
    """
    source = _load_source(paths, from_run_id)
    clones = _plan(paths, source, teachers)
    run_ids = [c.run_id for c in clones]

    with UiGraphQL(url) as ui:
        _check_reachable(ui)  # before loading the definitions (seconds)
        keys = _asset_keys(defs or _default_defs(), asset_selection)
        repository = _check_server(ui, keys)  # nothing is written unless the server answers and has the assets
        _check_instance(ui, paths, repository, project_defs=defs is None)

        from env0_posttrain.store import Store

        spec_paths = [write_spec(c, paths.runs) for c in clones]
        store = Store(paths.db)
        for c in clones:
            store.upsert_run(c)
        try:
            new = [r for r in run_ids if ui.add_dynamic_partition(repository, run_partitions.name, r)]
            backfill_id = ui.launch_asset_backfill(
                keys,
                run_ids,
                tags={BACKFILL_TAG: "teachers", SOURCE_TAG: source.run_id},
                title=f"teachers from {source.run_id}"[:100],
                description="; ".join(f"{c.run_id}: {c.teacher.model}" for c in clones)[:2000],
            )
            status = ui.backfill(backfill_id)["status"]
        except UiError as err:
            raise BackfillError(f"{err} (the cloned specs are written; the same command reuses them)") from None
    return BackfillInfo(
        backfill_id=backfill_id,
        source_run_id=source.run_id,
        run_ids=run_ids,
        spec_paths=spec_paths,
        new_partitions=new,
        asset_keys=keys,
        status=status,
        teachers={c.run_id: c.teacher.model for c in clones},
    )


def backfill_status(backfill_id: str, url: str = DEFAULT_UI_URL) -> str:
    """REQUESTED, COMPLETED_SUCCESS, FAILED...: the backfill's status as the webserver reports it."""
    try:
        with UiGraphQL(url) as ui:
            return ui.backfill(backfill_id)["status"]
    except UiError as err:
        raise BackfillError(str(err)) from None
