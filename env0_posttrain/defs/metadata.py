"""Turn a plain-Python StageResult into Dagster's MaterializeResult (metadata, data version, checks).

A path under the data dir's served folders becomes a URL on the artifact server (`util/artifact_http.py`) that
opens in one click from the UI; any other path stays a path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from env0_posttrain.stages.rollout_errors import RolloutStopped
from env0_posttrain.stages.context import StageResult
from env0_posttrain.util.artifact_http import artifact_url
from env0_posttrain.util.cpu_time import cpu_seconds, step_usage


def run_stage(fn, *args: Any) -> StageResult:
    """Call a stage; a rollout stopped on a deterministic failure fails the step once, without retries
    (the asset's RetryPolicy would only repeat the same error), with the stage's message as the reason. The result
    carries the step's CPU seconds and the load average at its end (util/cpu_time.py)."""
    cpu0 = cpu_seconds()
    try:
        result = fn(*args)
        result.metadata.update(step_usage(cpu0))
        return result
    except RolloutStopped as err:
        raise dg.Failure(description=str(err), metadata={"kind": err.kind, "spec_field": err.spec_field},
                         allow_retries=False) from None


def metadata_value(v: Any, root: Path) -> Any:
    if isinstance(v, Path):
        url = artifact_url(v, root)
        return dg.MetadataValue.url(url) if url else dg.MetadataValue.path(str(v))
    if isinstance(v, (dict, list)):
        return dg.MetadataValue.json(v)
    return v


def to_result(result: StageResult, asset: str, root: Path) -> dg.MaterializeResult:
    """`root`: the data dir, against which paths become artifact URLs."""
    metadata = {k: metadata_value(v, root) for k, v in result.metadata.items()}
    metadata.update({k: dg.MetadataValue.md(v) for k, v in result.markdown.items()})
    if skipped := {c.name: c.description for c in result.checks if c.passed is None}:
        metadata["checks_not_applicable"] = dg.MetadataValue.json(skipped)
    checks = [
        dg.AssetCheckResult(
            check_name=c.name,
            asset_key=asset,
            passed=c.passed,
            severity=dg.AssetCheckSeverity.ERROR,
            description=c.description,
            metadata={k: metadata_value(v, root) for k, v in c.metadata.items()},
        )
        for c in result.checks
        if c.passed is not None  # did not apply: no result, so the UI shows the check Skipped, not Passed
    ]
    return dg.MaterializeResult(
        metadata=metadata,
        data_version=dg.DataVersion(result.data_version),
        check_results=checks,
    )
