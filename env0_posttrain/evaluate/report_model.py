"""The comparison report as data: what goes in (`ReportInputs`), and every number the Markdown shows, typed, for
DuckDB and Dagster (`ComparisonReport`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.agent.records import Episode
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
from env0_posttrain.tasks.model import Task


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
    onpolicy: dict[str, RLComparison] = Field(default_factory=dict, description="onpolicy_vs_base / _vs_sft / "
                                              "_vs_teacher_eval when an on-policy arm ran")


class SuiteNumbers(BaseModel):
    """One eval suite in the seeds' shape: passes / rows per arm, adapter vs base paired, its boundary ledger against
    the training set, and what its tasks ask of the arms' budgets and of lora.max_seq_length."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    boundary: dict
    trials: int
    passes: dict[str, tuple[int, int]]  # arm -> (passes, rows)
    paired: PairedAnalysis | None = None  # sft vs base
    verdict: Verdict = "insufficient_data"
    budget_notes: list[str] = []
    rows_note: str | None = None

    @property
    def seen(self) -> str:
        return str(self.boundary.get("seen", "unseen"))


class SuitesView(BaseModel):
    """The run's eval suites as one report shows them: the run's report shows every suite (a summary table, then
    each suite's section, linked to its own report); a suite's own report shows its section alone (`own`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    numbers: list[SuiteNumbers]
    links: dict[str, str] = Field(default_factory=dict, description="suite -> its full report, relative to this one")
    note: str | None = Field(default=None, description="the line closing the section: which suite the details are "
                             "about, or the way back to the run's report")
    own: bool = False


class ReportInputs(BaseModel):
    """Everything a comparison report is made from, as one value: the eval episodes of arms base / sft /
    teacher_eval / rl and their tasks, the training curves, the task set's ledger, lineage, the trend so far, the
    statistics' settings, and (for a run with eval suites) the suites."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    episodes: list[Episode]
    tasks: list[Task]
    splits: dict[str, str] | None = Field(default=None, description="task id -> split label (eval, heldout, a suite)")
    training_metrics: list[Any] = Field(default_factory=list, description="the SFT trainer's logged rows")
    rl_training_metrics: list[Any] = Field(default_factory=list, description="GRPO's logged rows")
    onpolicy_rounds: list[Any] = Field(default_factory=list, description="the on-policy stage's per-round figures")
    ledger: list[Any] = Field(default_factory=list, description="rows for `parse_ledger`")
    lineage: dict[str, Any] = Field(default_factory=dict)
    history: list[Any] = Field(default_factory=list, description="earlier eval results (evaluate.history)")
    run_id: str | None = None
    alpha: float = 0.05
    power: float = 0.8
    n_boot: int = 10_000
    seed: int = 0
    created_at: datetime | None = None
    suites: SuitesView | None = None
    explorer: str | None = Field(default=None, description="the trajectory explorer's page, relative to the report")


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
    suites: list[SuiteNumbers] = Field(default_factory=list, description="the eval suites the report shows")
    files: dict[str, str] = Field(default_factory=dict, description="report.md / report.html / report.json paths once written "
                                 "(in report.json: relative to its folder)")
