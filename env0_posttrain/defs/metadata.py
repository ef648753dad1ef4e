"""Turn a plain-Python StageResult into Dagster's MaterializeResult (metadata, data version, checks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from env0_posttrain.stages import StageResult


def _value(v: Any) -> Any:
    if isinstance(v, Path):
        return dg.MetadataValue.path(str(v))
    if isinstance(v, (dict, list)):
        return dg.MetadataValue.json(v)
    return v


def to_result(result: StageResult, asset: str) -> dg.MaterializeResult:
    metadata = {k: _value(v) for k, v in result.metadata.items()}
    metadata.update({k: dg.MetadataValue.md(v) for k, v in result.markdown.items()})
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
