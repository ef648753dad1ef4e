"""Sensors: spec files dropped into data/runs/ become run partitions; a backfill clone's report refreshes its
source's teacher table.

A spec file that cannot run fails the spec sensor's tick with the file, the line and the field (Automation page:
run_spec_sensor shows the failed tick and its error), until it is fixed or removed; the valid ones are
registered all the same."""

import dagster as dg

from env0_posttrain.defs.jobs import teacher_table_job
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.spec_checks import report_if_changed, scan_specs, spec_files_evaluation

REFRESH_TAG = "env0/refresh_reason"


class SpecFilesInvalid(ValueError):
    """Spec files in data/runs/ that cannot run: each line names the file, the line and the field."""


@dg.sensor(minimum_interval_seconds=15, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Registers a run partition for every valid spec file in data/runs/; a file that cannot run "
           "fails the tick with its file, line and field.")
def run_spec_sensor(context: dg.SensorEvaluationContext, env0: Env0Resource):
    ids, errors = scan_specs(env0)
    report_if_changed(context.instance, spec_files_evaluation(str(env0.paths().runs), len(ids), errors))  # graph
    known = set(context.instance.get_dynamic_partitions(run_partitions.name))
    new = [i for i in ids if i not in known]
    if errors:
        if new:  # the good files are not held back by a bad one
            context.instance.add_dynamic_partitions(run_partitions.name, new)
        raise SpecFilesInvalid(f"{len(errors)} spec file(s) in {env0.paths().runs} cannot run"
                               + (f" ({len(new)} valid new run(s) registered: {new})" if new else "")
                               + ":\n" + "\n".join(errors))
    if new:
        return dg.SensorResult(dynamic_partitions_requests=[run_partitions.build_add_request(new)])
    orphans = sorted(known - set(ids))
    return dg.SkipReason(f"no new run specs ({len(ids)} known)" + (
        f"; partitions without a spec file: {orphans} (the new_run job makes one; the delete_orphan_partitions "
        "job removes those never materialized)" if orphans else ""))


def clone_sources(run_id: str, env0: Env0Resource) -> list[str]:
    """The runs `run_id` is a teacher backfill clone of (`<source>--<teacher>`, the source in the store)."""
    store = env0.store()
    parts = run_id.split("--")
    candidates = ["--".join(parts[:i]) for i in range(1, len(parts))]
    return [c for c in candidates if store.get_run(c) is not None and run_id in store.clone_run_ids(c)]


REPORT = dg.AssetKey("comparison_report")


@dg.sensor(job=teacher_table_job, default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=30,
           description="When a teacher backfill clone's comparison_report lands, materializes the source run's "
           "teacher_table again (the run's tag env0/refresh_reason says which report).")
def teacher_table_sensor(context: dg.SensorEvaluationContext, env0: Env0Resource):
    """Every comparison_report materialization since the cursor, oldest first (none is skipped when several
    land between ticks); one request per source and tick."""
    records = context.instance.fetch_materializations(REPORT, limit=200, cursor=context.cursor, ascending=True)
    requests: dict[str, dg.RunRequest] = {}
    for record in records.records:
        clone = record.partition_key
        for source in clone_sources(clone, env0) if clone else []:
            requests[source] = dg.RunRequest(
                run_key=f"teacher_table:{source}:{record.storage_id}", partition_key=source,
                tags={REFRESH_TAG: f"the report of {clone} (a teacher backfill clone of {source}) landed"})
    context.update_cursor(records.cursor)
    if not requests:
        return dg.SkipReason(f"no report of a teacher backfill clone among the {len(records.records)} new reports")
    return list(requests.values())
