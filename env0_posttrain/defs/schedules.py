"""Nightly evals for the runs whose spec opts in (eval.nightly: true for the tasks.n_eval split, nightly: true on
a suite), each playing only the suites marked nightly.

Dagster requires a schedule to add the partitions it targets in its own body, before asking for runs."""


from datetime import datetime, timezone

import dagster as dg

from env0_posttrain.defs.assets import EVAL_ASSETS, SUITE_EVAL_ASSETS, run_asset_keys
from env0_posttrain.defs.jobs import nightly_eval_job
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.runspec import RunSpec, SpecError, load_spec
from env0_posttrain.spec.suites import DEFAULT_SUITE


NIGHTLY_SUITE_ASSETS = [a for a in SUITE_EVAL_ASSETS if a.key in {e.key for e in EVAL_ASSETS}]


def nightly_suites(spec: RunSpec) -> list[str]:
    return ([DEFAULT_SUITE] if spec.eval.nightly and spec.tasks.n_eval else []) + [
        s.name for s in spec.suites if s.nightly]


def nightly_specs(env0: Env0Resource) -> list[RunSpec]:
    out = []
    for path in sorted(env0.paths().runs.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError:
            continue
        if nightly_suites(spec):
            out.append(spec)
    return out


def nightly_run_ids(env0: Env0Resource) -> list[str]:
    return [s.run_id for s in nightly_specs(env0)]


def nightly_config(spec: RunSpec, assets=EVAL_ASSETS) -> dict:
    """Without suites, the job's defaults (the eval split); with them, only the nightly suites (on the eval assets
    the run has: config for an op outside the run's selection is refused)."""
    if not spec.suites:
        return {}
    keys = set(run_asset_keys(spec, assets))
    return {"ops": {a.op.name: {"config": {"suites": nightly_suites(spec)}} for a in NIGHTLY_SUITE_ASSETS
                    if a.key in keys}}


NIGHTLY_TAG = "env0/nightly"  # the date (UTC) the run was asked for, e.g. 2026-11-29
TICK_TAG = "env0/nightly_tick"  # the tick it answers: another date when the UI's preview simulates one


def tick_date(context: dg.ScheduleEvaluationContext) -> str:
    """The date of the tick being evaluated, in the schedule's timezone (UTC), as the daemon and the UI's preview
    pass it; 'manual' when evaluated outside a tick."""
    when = context.scheduled_execution_time
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d") if when else "manual"


def today() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


@dg.schedule(cron_schedule="0 2 * * *", job=nightly_eval_job, execution_timezone="UTC",
             description="02:00 UTC: re-evaluates every run whose spec has eval.nightly: true or a suite with nightly: "
             "true (the eval arms and the report, on the nightly suites only). Teacher backfill clones join only when "
             "their backfill asked for it. Each run is tagged env0/nightly with the date it was asked for and "
             "env0/nightly_tick with the tick's.")
def nightly_eval_schedule(context: dg.ScheduleEvaluationContext, env0: Env0Resource):
    specs = nightly_specs(env0)
    run_ids = [s.run_id for s in specs]
    if not run_ids:
        return dg.SkipReason("no run spec has eval.nightly: true or a suite with nightly: true")
    known = set(context.instance.get_dynamic_partitions(run_partitions.name))
    missing = [r for r in run_ids if r not in known]
    if missing:
        context.instance.add_dynamic_partitions(run_partitions.name, missing)
    night = tick_date(context)
    tags = {NIGHTLY_TAG: today(), TICK_TAG: night}
    return [dg.RunRequest(run_key=f"{s.run_id}-{night}", partition_key=s.run_id, tags=tags,
                          asset_selection=run_asset_keys(s, EVAL_ASSETS), run_config=nightly_config(s, EVAL_ASSETS))
            for s in specs]
