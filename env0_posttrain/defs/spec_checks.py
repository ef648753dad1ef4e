"""Spec problems on the asset graph: `spec_files_valid`, a check on `task_set` (the root of every run) whose
verdict names each spec file in data/runs/ that cannot run, with its line and field, so a broken spec shows on the
graph and the asset's Checks tab, not only as a failed sensor tick. The spec sensor records a new verdict whenever
the set of problems changes; "Execute" on the check asks again."""

from __future__ import annotations

import dagster as dg

from env0_posttrain.making.new_run import check_spec_file
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.runspec import SpecError
from env0_posttrain.util.digests import sha256_hex

ASSET = dg.AssetKey("task_set")
CHECK = "spec_files_valid"
CHECK_KEY = dg.AssetCheckKey(ASSET, CHECK)


def scan_specs(env0: Env0Resource) -> tuple[list[str], list[str]]:
    """(valid run ids, error messages) for every spec file under the runs folder."""
    ids, errors = [], []
    for path in sorted(env0.paths().runs.glob("*.yaml")):
        try:
            ids.append(check_spec_file(path).run_id)
        except (SpecError, OSError) as err:
            errors.append(str(err))
    return ids, errors


def spec_files_evaluation(runs_folder: str, n_valid: int, errors: list[str]) -> dg.AssetCheckEvaluation:
    """The check's verdict over the scanned spec files (`errors`: one message per bad file, naming line and field)."""
    digest = sha256_hex("\n".join(errors), n=16)
    if errors:
        description = f"{len(errors)} spec file(s) in {runs_folder} cannot run: " + errors[0].splitlines()[0]
    else:
        description = f"every spec file in {runs_folder} can run ({n_valid})"
    return dg.AssetCheckEvaluation(
        asset_key=ASSET, check_name=CHECK, passed=not errors, severity=dg.AssetCheckSeverity.ERROR,
        description=description,
        metadata={"problems": dg.MetadataValue.md("\n".join(f"- {e}" for e in errors) or "none"),
                  "valid_specs": n_valid, "digest": digest})


def last_digest(instance: dg.DagsterInstance) -> str | None:
    """The problems digest of the check's latest verdict (None when it has none)."""
    records = instance.event_log_storage.get_asset_check_execution_history(CHECK_KEY, limit=1)
    event = records[0].event if records else None
    evaluation = event.dagster_event.event_specific_data if event and event.dagster_event else None
    value = getattr(evaluation, "metadata", {}).get("digest") if evaluation is not None else None
    return getattr(value, "value", None)


def report_if_changed(instance: dg.DagsterInstance, evaluation: dg.AssetCheckEvaluation) -> bool:
    """Record the verdict unless the latest one says the same (a sensor ticks every 15 s)."""
    if last_digest(instance) == evaluation.metadata["digest"].value:
        return False
    instance.report_runless_asset_event(evaluation)
    return True


@dg.asset_check(asset=ASSET, name=CHECK, blocking=False,
                description="Every spec file in data/runs/ can run; a failure names each file, its line and field "
                "(the run_spec_sensor records it too, whenever the problems change).")
def spec_files_valid(env0: Env0Resource) -> dg.AssetCheckResult:
    ids, errors = scan_specs(env0)
    e = spec_files_evaluation(str(env0.paths().runs), len(ids), errors)
    return dg.AssetCheckResult(passed=e.passed, severity=e.severity, description=e.description, metadata=e.metadata)
