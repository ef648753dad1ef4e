"""Turn a plain-Python StageResult into Dagster's MaterializeResult (metadata, data version, checks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from env0_posttrain.stages.rollout_errors import RolloutStopped
from env0_posttrain.stages.context import StageResult


def run_stage(fn, *args: Any) -> StageResult:
    """Call a stage; a rollout stopped on a deterministic failure fails the step once, without retries
    (the asset's RetryPolicy would only repeat the same error), with the stage's message as the reason."""
    try:
        return fn(*args)
    except RolloutStopped as err:
        raise dg.Failure(description=str(err), metadata={"kind": err.kind, "spec_field": err.spec_field},
                         allow_retries=False) from None


def _value(v: Any) -> Any:
    if isinstance(v, Path):
        return dg.MetadataValue.path(str(v))
    if isinstance(v, (dict, list)):
        return dg.MetadataValue.json(v)
    return v


def to_result(result: StageResult, asset: str) -> dg.MaterializeResult:
    metadata = {k: _value(v) for k, v in result.metadata.items()}
    metadata.update({k: dg.MetadataValue.md(v) for k, v in result.markdown.items()})
    metadata.update({k: dg.MetadataValue.url(v) for k, v in result.links.items()})
    checks = [
        dg.AssetCheckResult(
            check_name=c.name,
            asset_key=asset,
            passed=c.passed,
            severity=dg.AssetCheckSeverity.ERROR,
            description=c.description,
            metadata={k: _value(v) for k, v in c.metadata.items()},
        )
        for c in result.checks
    ]
    return dg.MaterializeResult(
        metadata=metadata,
        data_version=dg.DataVersion(result.data_version),
        check_results=checks,
    )
