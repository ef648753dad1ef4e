"""Dagster-side actions the CLI needs: the instance under data/, partitions, in-process materialization."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
from dagster._core.definitions.materialize import EPHEMERAL_JOB_NAME

from env0_posttrain.defs.assets import RUN_ASSETS, SUITE_EVAL_ASSETS
from env0_posttrain.defs.console_logger import compact_console_logger
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.orchestration.stale_runs import process_tags, sweep_dead_runs
from env0_posttrain.paths import Paths

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


def register_partition(instance: dg.DagsterInstance, run_id: str) -> bool:
    if instance.has_dynamic_partition(run_partitions.name, run_id):
        return False
    instance.add_dynamic_partitions(run_partitions.name, [run_id])
    return True


def materialize_run(
    run_id: str,
    paths: Paths,
    instance: dg.DagsterInstance,
    selection: Sequence[str] | None = None,
    log_level: str = "DEBUG",
    suites: Sequence[str] = (),
) -> tuple[dg.ExecuteInProcessResult, dict[str, float]]:
    """Materialize the run's assets in this process (no per-step process start-up), with step timings.
    `log_level` is the console's: Dagster logs every event at DEBUG, the stages' own lines at INFO.
    `suites`: the eval assets play only these suites (the others keep their newest rounds)."""
    register_partition(instance, run_id)
    sweep_dead_runs(instance, run_id)  # a killed earlier run would hold its pool slots forever
    assets = RUN_ASSETS
    sel = None if not selection else dg.AssetSelection.assets(*selection)
    t0 = time.time()
    console = dg.colored_console_logger if log_level.upper() == "DEBUG" else compact_console_logger
    defs = dg.Definitions(  # what dg.materialize builds, plus the console logger
        jobs=[dg.define_asset_job(EPHEMERAL_JOB_NAME, selection=sel)],
        assets=assets,
        resources={"env0": Env0Resource(data_dir=str(paths.root)), "pipes_client": dg.PipesSubprocessClient()},
        loggers={"console": console},
    )
    job = defs.resolve_job_def(EPHEMERAL_JOB_NAME)
    run_config: dict = {"loggers": {"console": {"config": {"log_level": log_level.upper()}}}}
    if suites:
        run_config["ops"] = suites_config(suites, [n.name for n in job.graph.nodes])
    result = job.execute_in_process(
        run_config=run_config,
        instance=instance,
        partition_key=run_id,
        raise_on_error=False,
        tags=run_tags(),
    )
    timings = step_timings(instance, result.run_id)
    timings["total"] = time.time() - t0
    return result, timings


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
