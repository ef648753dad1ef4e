"""Nightly history: one point per (eval materialization, arm), kept by the store and plotted as a trend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class TrendPoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    timestamp: datetime
    arm: str
    pass_rate: float
    ci_low: float | None = None
    ci_high: float | None = None
    run_id: str | None = None


def parse_history(rows: Iterable[TrendPoint | Mapping[str, Any]], source: str = "history") -> list[TrendPoint]:
    """Accept stored rows (dicts) or TrendPoints; a bad row fails naming its index and field."""
    out = []
    for i, row in enumerate(rows):
        if isinstance(row, TrendPoint):
            out.append(row)
            continue
        try:
            out.append(TrendPoint.model_validate(dict(row)))
        except ValidationError as err:
            fields = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            raise ValueError(f"{source} row {i}: {fields}") from None
    return sorted(out, key=lambda p: (p.timestamp, p.arm))
