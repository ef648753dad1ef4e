"""Dagster-side actions the CLI needs: the instance under data/, partitions, in-process materialization."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from dagster._core.definitions.materialize import EPHEMERAL_JOB_NAME

from env0_posttrain.defs.assets import RECOLLECT_TAG, RUN_ASSETS, SUITE_EVAL_ASSETS
from env0_posttrain.defs.console_logger import compact_console_logger, verbose_console_logger
from env0_posttrain.defs.partitions import register_partition
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.orchestration.needed import IN_PROGRESS, asset_states, needed
from env0_posttrain.run_worker.pool_wait import INTERRUPTED, PoolWatch, install, launch_tag
from env0_posttrain.run_worker.stale_runs import process_tags, sweep_dead_runs
from env0_posttrain.spec.optional_stages import absent_assets, not_applicable_reason
from env0_posttrain.spec.runspec import SpecError, load_run_spec
from env0_posttrain.util.paths import Paths
from env0_posttrain.store import Store

install()  # pool waits sleep and hear Ctrl-C (pool_wait.py)
RECOLLECTED_ASSET = {"teacher": "teacher_trajectories"}  # `--recollect-teacher`: the asset that collects it

REPO_ROOT = Path(__file__).resolve().parents[2]


def prepare_dagster_home(paths: Paths) -> Path:
    """DAGSTER_HOME lives under the data root and uses the repo's dagster.yaml."""
    home = paths.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    src = REPO_ROOT / "dagster.yaml"
    if src.exists():
        (home / "dagster.yaml").write_text(src.read_text())
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    return home


def instance_for(paths: Paths) -> dg.DagsterInstance:
    """The instance under the data root. Use it as `with instance_for(paths) as instance:`: entering makes it
    the current one for in-process code loading (Dagster keeps a context variable that a schedule or sensor
    context built elsewhere can leave pointing at a disposed instance) and leaving disposes it."""
    prepare_dagster_home(paths)
    return dg.DagsterInstance.get()


@dataclass
class Materialization:
    """What `materialize_run` did: its Dagster results (one per pass, none when all was up to date), why each
    asset ran, the step timings (a step run in two passes: summed) and the pool waits it saw."""

    results: list[dg.ExecuteInProcessResult] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    waits: list[str] = field(default_factory=list)
    left_to_others: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return all(r.success for r in self.results)

    @property
    def interrupted(self) -> bool:
        return INTERRUPTED.is_set() or any(r.dagster_run.status == dg.DagsterRunStatus.CANCELED for r in self.results)


def materialize_run(
    run_id: str,
    paths: Paths,
    instance: dg.DagsterInstance,
    selection: Sequence[str] | None = None,
    log_level: str = "DEBUG",
    *,
    everything: bool = False,
    recollect: Sequence[str] = (),
    suites: Sequence[str] = (),
) -> Materialization:
    """Materialize the run's assets in this process (no per-step process start-up), with step timings.

    `selection` names the assets to run; without it, only those that are missing, failed or stale
    (`needed.py`), asked again after each pass (a new data version upstream makes what is below it stale),
    or every asset with `everything`. `recollect` names arms whose finished round is collected again
    (`teacher`: its asset joins the selection). `suites`: the eval assets play only these suites (the others
    keep their newest rounds; without a selection the eval assets join the first pass). `log_level` is the
    console's: Dagster logs every event at DEBUG, the stages' own lines at INFO."""
    register_partition(instance, run_id)
    absent = _absent(paths, run_id)  # the optional stages its spec lacks are never launched
    if refused := [k for k in selection or () if k in absent]:
        raise ValueError("; ".join(not_applicable_reason(k) for k in refused))
    assets = [a for a in RUN_ASSETS if a.key.to_user_string() not in absent]
    sweep_dead_runs(instance)  # a killed earlier run (of any partition) would hold its pool slots forever
    Store(paths.db).running_trainings()  # marks those of dead processes failed
    t0 = time.time()
    out = Materialization()
    extra = [RECOLLECTED_ASSET[a] for a in recollect if a in RECOLLECTED_ASSET]
    if suites and not selection:
        extra += [a.key.to_user_string() for a in SUITE_EVAL_ASSETS if a in assets]
    for n in range(len(assets)):  # each pass materializes at least one asset, or stops
        if selection or everything:
            keys = list(dict.fromkeys([*(selection or [a.key.to_user_string() for a in assets]), *extra]))
            out.reasons |= {k: "asked for" for k in keys}
        else:
            states = asset_states(instance, assets, run_id)
            keys = [k.to_user_string() for k in needed(states)] + [a for a in extra if n == 0]
            out.reasons |= {k: states[dg.AssetKey(k)] or "asked for" for k in keys}
            out.left_to_others = [k.to_user_string() for k, why in states.items() if why == IN_PROGRESS]
            keys = [k for k in dict.fromkeys(keys) if k not in out.timings]  # never twice in one call
        if not keys:
            break
        result, timings, waits = _execute(run_id, paths, instance, keys, log_level, recollect, suites)
        out.results.append(result)
        out.waits += [w for w in waits if w not in out.waits]
        for k, v in timings.items():
            out.timings[k] = out.timings.get(k, 0.0) + v
        if selection or everything or not result.success:
            break
    out.timings["total"] = time.time() - t0
    return out


def _absent(paths: Paths, run_id: str) -> frozenset[str]:
    try:
        return absent_assets(load_run_spec(paths, run_id))
    except SpecError:  # each step says so itself, naming how to make the spec
        return frozenset()


def _execute(run_id: str, paths: Paths, instance: dg.DagsterInstance, keys: Sequence[str], log_level: str,
             recollect: Sequence[str], suites: Sequence[str]) -> tuple[dg.ExecuteInProcessResult, dict[str, float], list[str]]:
    console = verbose_console_logger if log_level.upper() == "DEBUG" else compact_console_logger
    defs = dg.Definitions(  # what dg.materialize builds, plus the console logger
        jobs=[dg.define_asset_job(EPHEMERAL_JOB_NAME, selection=dg.AssetSelection.assets(*keys))],
        assets=RUN_ASSETS,
        resources={"env0": Env0Resource(data_dir=str(paths.root)), "pipes_client": dg.PipesSubprocessClient()},
        loggers={"console": console},
    )
    tag = launch_tag()
    tags = run_tags() | dict([tag]) | ({RECOLLECT_TAG: ",".join(recollect)} if recollect else {})
    job = defs.resolve_job_def(EPHEMERAL_JOB_NAME)
    run_config: dict = {"loggers": {"console": {"config": {"log_level": log_level.upper()}}}}
    if suites:
        run_config["ops"] = suites_config(suites, [n.name for n in job.graph.nodes])
    with PoolWatch(instance, tag) as watch:
        result = job.execute_in_process(
            run_config=run_config,
            instance=instance,
            partition_key=run_id,
            raise_on_error=False,
            tags=tags,
        )
    instance.event_log_storage.free_concurrency_slots_for_run(result.run_id)  # an interrupted wait's claims too
    return result, step_timings(instance, result.run_id), watch.waited


def suites_config(suites: Sequence[str], ops: Sequence[str]) -> dict:
    """Op config that makes every eval asset among `ops` play only `suites` (the CLI's --suite)."""
    evals = {a.op.name for a in SUITE_EVAL_ASSETS}
    return {name: {"config": {"suites": list(suites)}} for name in ops if name in evals}


def run_tags() -> dict[str, str]:
    return {"env0/launched_by": "cli", **process_tags()}


def step_timings(instance: dg.DagsterInstance, dagster_run_id: str) -> dict[str, float]:
    return {
        s.step_key: (s.end_time or s.start_time or 0) - (s.start_time or 0)
        for s in instance.get_run_step_stats(dagster_run_id)
    }
