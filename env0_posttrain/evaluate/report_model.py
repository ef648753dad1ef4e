"""The comparison report as data: every number the Markdown shows is here, typed, for DuckDB and Dagster."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.evaluate.behaviours import BehaviourRate
from env0_posttrain.evaluate.first_action import FirstActionSummary
from env0_posttrain.evaluate.metrics import ArmMetrics, UnscoredRow
from env0_posttrain.evaluate.rl_compare import RLComparison
from env0_posttrain.evaluate.statistics import (
    FlipTable,
    MinimumDetectableEffect,
    PairedAnalysis,
    TwoProportionTest,
)
from env0_posttrain.evaluate.verdict import Verdict


class LedgerEntry(BaseModel):
    """The task set's generation-time check for one family: oracle should pass, doing nothing should not."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    n: int = Field(ge=0, description="drawn: scored by the check, kept or not")
    oracle_pass_rate: float = Field(ge=0.0, le=1.0)
    noop_pass_rate: float = Field(ge=0.0, le=1.0)
    used: int | None = Field(default=None, ge=0, description="in the task set's splits (None: not recorded)")
    dropped: int = Field(default=0, ge=0)
    dropped_reasons: dict[str, int] = Field(default_factory=dict)


def parse_ledger(rows: Sequence[Mapping[str, Any] | Any]) -> list[LedgerEntry]:
    """Dicts (family, n, oracle_pass_rate, noop_pass_rate, and used / dropped / dropped_reasons where recorded) or
    tasks.ledger.LedgerRow objects (tasks -> n); a row stored before used / dropped were counted gets the defaults."""
    out = []
    for i, row in enumerate(rows):
        get = row.get if isinstance(row, Mapping) else (lambda k, r=row: getattr(r, k, None))
        n = get("n") if get("n") is not None else get("tasks")
        try:
            out.append(LedgerEntry(family=get("family"), n=n, oracle_pass_rate=get("oracle_pass_rate"),
                                   noop_pass_rate=get("noop_pass_rate"), used=get("used"),
                                   dropped=get("dropped") or 0, dropped_reasons=get("dropped_reasons") or {}))
        except Exception as err:  # pydantic ValidationError: name the row
            raise ValueError(f"ledger row {i} ({get('family')!r}): {err}") from None
    return out


class TrainingSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    logged_rows: int = 0
    last_step: int | None = None
    final_loss: float | None = None
    final_eval_loss: float | None = None
    best_eval_loss: float | None = None
    max_gpu_mem_gb: float | None = None


class ReportNumbers(BaseModel):
    model_config = ConfigDict(extra="forbid")

    alpha: float
    verdict: Verdict
    arms: dict[str, ArmMetrics]
    unpaired: TwoProportionTest | None = Field(description="adapter vs base, the seeds' unpaired check")
    paired: PairedAnalysis | None = Field(description="adapter vs base over shared tasks: the verdict's test")
    teacher_paired: PairedAnalysis | None = Field(default=None, description="teacher vs base, the ceiling")
    mde: MinimumDetectableEffect | None
    flips: FlipTable | None
    per_family: dict[str, dict[str, ArmMetrics]]
    per_difficulty: dict[str, dict[str, ArmMetrics]]
    per_split: dict[str, dict[str, ArmMetrics]] = Field(description="only when the eval holds 2+ split labels")
    paired_by_split: dict[str, PairedAnalysis] = Field(default_factory=dict)
    first_action: dict[str, FirstActionSummary]
    first_action_by_family: dict[str, dict[str, float]] = Field(default_factory=dict)
    behaviours: dict[str, dict[str, BehaviourRate]]
    training: TrainingSummary
    unscored: list[UnscoredRow]
    rl: dict[str, RLComparison] = Field(default_factory=dict, description="rl_vs_base / rl_vs_sft when an RL arm ran")


class ComparisonReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    created_at: datetime
    headline: str
    numbers: ReportNumbers
    ledger: list[LedgerEntry]
    lineage: dict[str, Any]
    markdown: str
    html: str = Field(repr=False, description="self-contained: PNGs inlined as base64")
    plot_paths: dict[str, str] = Field(description="figure name -> PNG path (in report.json: relative to its folder)")
    files: dict[str, str] = Field(default_factory=dict, description="report.md / report.html / report.json paths once written "
                                 "(in report.json: relative to its folder)")
