"""results.jsonl -> Prime-SFT rows or TRL rows, with every input row accounted for.

The reference loop's worst failure was a conversion that quietly produced 0 rows out of
1,703. Here bad rows are listed (file, row, field) while the good ones convert, every skipped
row is counted with its reason, the counts must add up, and a result with fewer episodes than
expected raises instead of writing; a failed conversion never touches an existing output file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft.curation import CurationReport, Example, curate, first_turn_copies
from env0_posttrain.sft.jsonl_io import write_jsonl_atomic
from env0_posttrain.sft.results import ResultsRow
from env0_posttrain.sft.rows import PrimeSFTRow, TrlRow, to_trl_message
from env0_posttrain.sft.validation import Problem, ValidationReport, validate_rows_parsed

Format = Literal["prime", "trl"]


@dataclass
class ConversionReport:
    source: str
    format: str
    validation: ValidationReport
    curation: CurationReport
    n_output_rows: int = 0
    expected_episodes: int | None = None
    out_path: str | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def n_input(self) -> int:
        return self.validation.n_rows

    @property
    def n_invalid(self) -> int:
        return len(self.validation.bad_rows) + sum(1 for p in self.problems if p.row)

    @property
    def skipped(self) -> dict[str, int]:
        counts = dict(self.curation.skipped)
        if self.n_invalid:
            counts["invalid"] = self.n_invalid
        return counts

    def to_dict(self, max_listed: int = 100) -> dict[str, Any]:
        """JSON-ready counts for asset metadata: every input row is in exactly one of kept/skipped."""
        cur = self.curation
        return {
            "source": self.source, "format": self.format, "n_input": self.n_input,
            "n_kept_episodes": cur.n_kept_episodes, "n_output_rows": self.n_output_rows,
            "n_upweight_copies": cur.n_upweight_copies, "skipped": self.skipped,
            "length_checked": cur.length_checked, "n_overlength": cur.n_overlength, "n_windows": cur.n_windows,
            "n_turns_dropped_overlength": cur.n_turns_dropped_overlength,
            "expected_episodes": self.expected_episodes, "out_path": self.out_path,
            "invalid": [str(p) for p in [*self.validation.problems, *self.problems][:max_listed]],
            "skipped_rows": [f"row {s.row} {s.episode_key}: {s.reason}" for s in cur.skipped_rows[:max_listed]],
        }

    def summary(self) -> str:
        skipped = ", ".join(f"{k}={v}" for k, v in sorted(self.skipped.items())) or "none"
        length = (f"overlength={self.curation.n_overlength} windows={self.curation.n_windows} "
                  f"turns_dropped={self.curation.n_turns_dropped_overlength}"
                  if self.curation.length_checked else "length not checked (no tokenizer)")
        return (f"{self.source} -> {self.format}: {self.n_input} input rows, {self.curation.n_kept_episodes} "
                f"episodes kept, {self.n_output_rows} output rows "
                f"({self.curation.n_upweight_copies} first-turn copies); skipped: {skipped}; {length}")

    def __str__(self) -> str:
        bad = [str(p) for p in [*self.validation.problems, *self.problems]]
        skipped = [f"  {self.source}: row {s.row}: {s.reason}" + (f": {s.detail}" if s.detail else "")
                   for s in self.curation.skipped_rows]
        return "\n".join([self.summary(), *(f"  {b}" for b in bad), *skipped])


class ConversionError(ValueError):
    def __init__(self, message: str, report: ConversionReport):
        super().__init__(f"{message}\n{report}")
        self.report = report


def to_prime_rows(examples: Iterable[Example]) -> list[PrimeSFTRow]:
    return [
        PrimeSFTRow(
            messages=ex.messages, tool_defs=ex.row.tool_defs, reward=ex.row.reward, task_id=ex.row.info.task_id,
            task_name=ex.row.info.task_name, model=ex.row.info.model, agent=ex.row.info.agent, source=ex.source,
        )
        for ex in examples
    ]


def to_trl_rows(examples: Iterable[Example]) -> list[TrlRow]:
    return [
        TrlRow(messages=[to_trl_message(m) for m in ex.messages], tools=ex.row.tool_defs, source=ex.source)
        for ex in examples
    ]


def read_results(path_or_rows: str | Path | Iterable[Any], fmt: str,
                 expected_episodes: int | None = None) -> tuple[list[tuple[int, ResultsRow]], ConversionReport]:
    """Validate the input and keep its results rows; every other row is listed in the report."""
    validation, good = validate_rows_parsed(path_or_rows)
    report = ConversionReport(source=validation.source, format=fmt, validation=validation,
                              curation=CurationReport(), expected_episodes=expected_episodes)
    rows: list[tuple[int, ResultsRow]] = []
    for rownum, kind, model in good:
        if isinstance(model, ResultsRow):
            rows.append((rownum, model))
        else:
            report.problems.append(Problem(validation.source, rownum, "(row)",
                                           f"a {kind} row, but conversion reads results rows (prompt+completion)"))
    return rows, report


def check_counts(report: ConversionReport, n_out: int) -> None:
    """Every input row accounted for, at least the expected episodes kept, never zero rows from a non-empty input."""
    report.n_output_rows = n_out
    cur = report.curation
    accounted = report.n_invalid + sum(cur.skipped.values()) + cur.n_kept_episodes
    if accounted != report.n_input:
        raise ConversionError(f"row accounting is off: {accounted} accounted for, {report.n_input} read", report)
    expected = report.expected_episodes
    if expected is not None and cur.n_kept_episodes < expected:
        raise ConversionError(f"{report.format} conversion kept {cur.n_kept_episodes} episodes, "
                              f"expected at least {expected}", report)
    if report.n_input == 0:
        raise ConversionError("conversion input has no rows", report)
    if n_out == 0:
        raise ConversionError(f"{report.format} conversion produced 0 rows from {report.n_input} input rows", report)


def curated_examples(
    path_or_rows: str | Path | Iterable[Any],
    policy: SFTDataPolicy,
    *,
    fmt: str = "prime",
    tokenizer: Any = None,
    max_seq_length: int | None = None,
    expected_episodes: int | None = None,
) -> tuple[list[Example], ConversionReport]:
    """Validated, curated, upweighted conversations (with their sources) and the checked report."""
    if policy.upweight_mode == "weight" and policy.first_turn_weight > 1:
        raise ValueError("sft.upweight_mode='weight' needs TITO rows (per-turn loss weights); chat rows "
                         "can only be upweighted by repetition (upweight_mode='repeat')")
    rows, report = read_results(path_or_rows, fmt, expected_episodes)
    results_file = str(path_or_rows) if isinstance(path_or_rows, (str, Path)) else None
    examples, _ = curate(rows, policy, tokenizer=tokenizer, max_seq_length=max_seq_length,
                         results_file=results_file, report=report.curation)
    copies = [c for ex in examples for c in first_turn_copies(ex, policy)]
    report.curation.n_upweight_copies = len(copies)
    check_counts(report, len(examples) + len(copies))
    return [*examples, *copies], report


def convert_rows(
    path_or_rows: str | Path | Iterable[Any],
    policy: SFTDataPolicy,
    *,
    fmt: Format = "prime",
    tokenizer: Any = None,
    max_seq_length: int | None = None,
    expected_episodes: int | None = None,
) -> tuple[list[PrimeSFTRow] | list[TrlRow], ConversionReport]:
    """Convert the valid results rows; raise ConversionError if fewer episodes than expected survive.

    `expected_episodes=None` still refuses to turn a non-empty input into zero rows.
    """
    examples, report = curated_examples(path_or_rows, policy, fmt=fmt, tokenizer=tokenizer,
                                        max_seq_length=max_seq_length, expected_episodes=expected_episodes)
    return (to_trl_rows(examples) if fmt == "trl" else to_prime_rows(examples)), report


def convert_both(
    path_or_rows: str | Path | Iterable[Any],
    policy: SFTDataPolicy,
    *,
    tokenizer: Any = None,
    max_seq_length: int | None = None,
    expected_episodes: int | None = None,
) -> tuple[list[PrimeSFTRow], list[TrlRow], ConversionReport]:
    """Prime-SFT and TRL rows from one validation and curation pass (row i of both is the same conversation)."""
    examples, report = curated_examples(path_or_rows, policy, fmt="prime+trl", tokenizer=tokenizer,
                                        max_seq_length=max_seq_length, expected_episodes=expected_episodes)
    return to_prime_rows(examples), to_trl_rows(examples), report


def convert_file(
    results_path: str | Path,
    out_path: str | Path,
    policy: SFTDataPolicy,
    *,
    fmt: Format = "prime",
    tokenizer: Any = None,
    max_seq_length: int | None = None,
    expected_episodes: int | None = None,
) -> ConversionReport:
    """Convert a results.jsonl file and write the rows atomically; on any failure the output is untouched."""
    rows, report = convert_rows(Path(results_path), policy, fmt=fmt, tokenizer=tokenizer,
                                max_seq_length=max_seq_length, expected_episodes=expected_episodes)
    stored = [r.to_jsonl_dict() for r in rows] if fmt == "trl" else rows
    write_jsonl_atomic(stored, out_path)
    report.out_path = str(out_path)
    return report
