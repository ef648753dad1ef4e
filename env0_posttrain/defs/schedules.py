"""Nightly evals for the runs whose spec opts in (eval.nightly: true).

Dagster requires a schedule to add the partitions it targets in its own body, before asking for runs."""


import dagster as dg

from env0_posttrain.defs.jobs import nightly_eval_job
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.runspec import SpecError, load_spec


def nightly_run_ids(env0: Env0Resource) -> list[str]:
    out = []
    for path in sorted(env0.paths().runs.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError:
            continue
        if spec.eval.nightly:
            out.append(spec.run_id)
    return out


@dg.schedule(cron_schedule="0 2 * * *", job=nightly_eval_job, execution_timezone="UTC")
def nightly_eval_schedule(context: dg.ScheduleEvaluationContext, env0: Env0Resource):
    run_ids = nightly_run_ids(env0)
    if not run_ids:
        return dg.SkipReason("no run spec has eval.nightly: true")
    known = set(context.instance.get_dynamic_partitions(run_partitions.name))
    missing = [r for r in run_ids if r not in known]
    if missing:
        context.instance.add_dynamic_partitions(run_partitions.name, missing)
    night = context.scheduled_execution_time.strftime("%Y-%m-%d") if context.scheduled_execution_time else "manual"
    return [dg.RunRequest(run_key=f"{r}-{night}", partition_key=r, tags={"env0/nightly": night}) for r in run_ids]
