"""A spec file dropped into data/runs/ becomes a run partition; a bad one is reported, not registered."""


import dagster as dg

from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.runspec import SpecError, load_spec


def scan_specs(env0: Env0Resource) -> tuple[list[str], list[str]]:
    """(valid run ids, error messages) for every spec file under the runs folder."""
    ids, errors = [], []
    for path in sorted(env0.paths().runs.glob("*.yaml")):
        try:
            ids.append(load_spec(path).run_id)
        except SpecError as err:
            errors.append(str(err))
    return ids, errors


@dg.sensor(minimum_interval_seconds=15, default_status=dg.DefaultSensorStatus.RUNNING)
def run_spec_sensor(context: dg.SensorEvaluationContext, env0: Env0Resource):
    ids, errors = scan_specs(env0)
    for e in errors:
        context.log.warning(e)
    known = set(context.instance.get_dynamic_partitions(run_partitions.name))
    new = [i for i in ids if i not in known]
    if not new:
        return dg.SkipReason(f"no new run specs ({len(ids)} known, {len(errors)} invalid)")
    return dg.SensorResult(dynamic_partitions_requests=[run_partitions.build_add_request(new)])
