"""Backfills for new teachers: one cloned run spec per teacher, one Dagster asset backfill over them.

The partitions and the backfill go to the running webserver (`env0-posttrain ui`) through Dagster's public
GraphQL API (`addDynamicPartition`, `launchPartitionBackfill`), exactly as the UI's "Launch backfill" sends
them, so they land in the instance whose daemon runs them and the UI's Backfills page lists them. Everything
is checked (specs, asset keys, the server and its assets) before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from env0_posttrain.making.new_run import BackfillError, backfill_labels, load_source, plan_clones, write_clones
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.spec.optional_stages import applicable
from env0_posttrain.orchestration.ui_graphql import DEFAULT_UI_URL, LOCATION, UiError, UiGraphQL, UiUnreachable
from env0_posttrain.util.paths import Paths


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
    warnings: list[str] = field(default_factory=list)  # e.g. a teacher's key variable not set here


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
    nightly: bool = False,
) -> BackfillInfo:
    """Clone `from_run_id` once per teacher, register the partitions and launch one asset backfill at `url`.

    `asset_selection` defaults to every asset of `defs` (the project's) on the run_id partitions; `nightly`: the
    clones join the nightly evals as their source does (else they do not).
    """
    source = load_source(paths, from_run_id)
    clones, warnings = plan_clones(paths, source, teachers, nightly)
    run_ids = [c.run_id for c in clones]

    with UiGraphQL(url) as ui:
        _check_reachable(ui)  # before loading the definitions (seconds)
        keys = applicable(_asset_keys(defs or _default_defs(), asset_selection), source)  # the clones' stages
        repository = _check_server(ui, keys)  # nothing is written unless the server answers and has the assets
        _check_instance(ui, paths, repository, project_defs=defs is None)

        spec_paths = write_clones(paths, clones)
        try:
            new = [r for r in run_ids if ui.add_dynamic_partition(repository, run_partitions.name, r)]
            tags, title, description = backfill_labels(source, clones)
            backfill_id = ui.launch_asset_backfill(keys, run_ids, tags=tags, title=title, description=description)
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
        warnings=warnings,
    )


def backfill_status(backfill_id: str, url: str = DEFAULT_UI_URL) -> str:
    """REQUESTED, COMPLETED_SUCCESS, FAILED...: the backfill's status as the webserver reports it."""
    try:
        with UiGraphQL(url) as ui:
            return ui.backfill(backfill_id)["status"]
    except UiError as err:
        raise BackfillError(str(err)) from None
