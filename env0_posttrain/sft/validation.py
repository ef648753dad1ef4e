"""Validate results.jsonl, Prime-SFT, TRL and TITO files: every problem, each with file, row and field.

One entry point serves the CLI (`env0-posttrain sft validate FILE`), the Dagster asset check
and the converter, so a row the check accepts is a row the converter accepts. The row kind is
recognised from its keys: `prompt`+`completion` (results), `messages` (Prime-SFT or TRL),
`input_ids` (TITO).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from env0_posttrain.sft.jsonl_io import iter_jsonl
from env0_posttrain.sft.message_rules import Issue, check_conversation, find_banned_keys, tool_names_from_defs
from env0_posttrain.sft.results import TRAINABLE_STOPS, ResultsRow
from env0_posttrain.sft.rows import PrimeSFTRow, StoredFieldError, TitoRow, TrlRow


@dataclass(frozen=True)
class Problem:
    file: str
    row: int  # 1-based line (file) or position (in-memory rows); 0 = the file itself
    field: str
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" if self.row else "file"
        return f"{self.file}: {where}: {self.field}: {self.message}"


@dataclass
class ValidationReport:
    source: str
    n_rows: int = 0
    problems: list[Problem] = field(default_factory=list)
    kinds: Counter = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def bad_rows(self) -> list[int]:
        return sorted({p.row for p in self.problems if p.row})

    @property
    def n_valid(self) -> int:
        return self.n_rows - len(self.bad_rows)

    def summary(self) -> str:
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(self.kinds.items())) or "none"
        return (f"{self.source}: {self.n_rows} rows ({kinds}), {self.n_valid} valid, "
                f"{len(self.bad_rows)} invalid, {len(self.problems)} problems")

    def __str__(self) -> str:
        return "\n".join([self.summary(), *(f"  {p}" for p in self.problems)])

    def to_dict(self, max_problems: int = 100) -> dict[str, Any]:
        """JSON-ready summary for CLI output and Dagster asset-check metadata."""
        return {
            "source": self.source, "ok": self.ok, "n_rows": self.n_rows, "n_valid": self.n_valid,
            "n_invalid": len(self.bad_rows), "n_problems": len(self.problems), "kinds": dict(self.kinds),
            "problems": [str(p) for p in self.problems[:max_problems]],
        }

    def raise_for_problems(self) -> None:
        if not self.ok:
            raise RowValidationError(self)


class RowValidationError(ValueError):
    def __init__(self, report: ValidationReport):
        super().__init__(str(report))
        self.report = report


def _pydantic_issues(err: ValidationError) -> list[Issue]:
    out: list[Issue] = []
    for e in err.errors():
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]).lstrip(".") or "(row)"
        out.append((loc, e["msg"]))
    return out


def row_kind(value: Any) -> str:
    if not isinstance(value, dict):
        return "unknown"
    if "prompt" in value and "completion" in value:
        return "results"
    if "messages" in value:
        return "trl" if "tools" in value else "prime"
    if "input_ids" in value:
        return "tito"
    return "unknown"


def _conversation_issues(located: list[tuple[str, Any]], tools: Any, tools_field: str) -> list[Issue]:
    names, tool_issues = tool_names_from_defs(tools, tools_field)
    return tool_issues + check_conversation(located, None if tool_issues else names)


def _check_results(value: dict[str, Any]) -> tuple[BaseModel | None, list[Issue]]:
    issues: list[Issue] = []
    model = None
    try:
        model = ResultsRow.model_validate(value)
    except ValidationError as err:
        issues.extend(_pydantic_issues(err))
    info = value.get("info")
    claimed_ready = not (isinstance(info, dict) and info.get("training_ready") is False)
    # A row recorded as not training-ready is a faithful record of what the agent did (an unknown
    # tool, malformed arguments); its conversation rules only bind rows that claim to be ready.
    prompt, completion = value.get("prompt"), value.get("completion")
    if claimed_ready and isinstance(prompt, list) and isinstance(completion, list):
        located = [(f"prompt[{i}]", m) for i, m in enumerate(prompt)]
        located += [(f"completion[{i}]", m) for i, m in enumerate(completion)]
        issues.extend(_conversation_issues(located, value.get("tool_defs", []), "tool_defs"))
    if claimed_ready and value.get("stop_condition") not in (*TRAINABLE_STOPS, None):
        issues.append(("info.training_ready", f"true, but stop_condition is {value.get('stop_condition')!r}"))
    issues.extend(find_banned_keys(value, ""))
    return model, issues


def _check_chat(value: dict[str, Any], kind: str) -> tuple[BaseModel | None, list[Issue]]:
    issues: list[Issue] = []
    model = None
    try:
        model = TrlRow.from_stored(value) if kind == "trl" else PrimeSFTRow.model_validate(value)
    except ValidationError as err:
        issues.extend(_pydantic_issues(err))
    except StoredFieldError as err:  # a `tools`/`source` string that is not JSON
        issues.append((err.field, err.message))
    messages = value.get("messages")
    tools_field = "tools" if kind == "trl" else "tool_defs"
    if isinstance(messages, list):
        located = [(f"messages[{i}]", m) for i, m in enumerate(messages)]
        issues.extend(_conversation_issues(located, value.get(tools_field, []), tools_field))
    issues.extend(find_banned_keys(value, ""))
    return model, issues


def _check_tito(value: dict[str, Any]) -> tuple[BaseModel | None, list[Issue]]:
    try:
        return TitoRow.model_validate(value), find_banned_keys(value, "")
    except ValidationError as err:
        return None, _pydantic_issues(err) + find_banned_keys(value, "")


def check_row(value: Any) -> tuple[str, BaseModel | None, list[Issue]]:
    """Kind, parsed model (None when the schema fails) and every issue of one row."""
    kind = row_kind(value)
    if kind == "unknown":
        if not isinstance(value, dict):
            return kind, None, [("(row)", f"a row must be a JSON object, got {type(value).__name__}")]
        return kind, None, [("(row)", "not a results row (prompt+completion), chat row (messages) or TITO row "
                                      f"(input_ids); keys: {sorted(value)[:8]}")]
    if kind == "results":
        model, issues = _check_results(value)
    elif kind == "tito":
        model, issues = _check_tito(value)
    else:
        model, issues = _check_chat(value, kind)
    return kind, (model if not issues else None), list(dict.fromkeys(issues))


def _iter_source(path_or_rows: str | Path | Iterable[Any], report: ValidationReport) -> Iterable[tuple[int, Any]]:
    if isinstance(path_or_rows, (str, Path)):
        path = Path(path_or_rows)
        if not path.exists():
            report.problems.append(Problem(report.source, 0, "(file)", "file not found"))
            return
        if path.is_dir():
            report.problems.append(Problem(report.source, 0, "(file)", "is a directory, not a JSONL file"))
            return
        for line in iter_jsonl(path):
            if line.error:
                report.n_rows += 1
                report.problems.append(Problem(report.source, line.line, "(line)", line.error))
                continue
            yield line.line, line.value
        return
    for i, row in enumerate(path_or_rows):
        if isinstance(row, BaseModel):
            row = row.to_jsonl_dict() if isinstance(row, TrlRow) else row.model_dump(mode="json")
        yield i + 1, row


def validate_rows_parsed(
    path_or_rows: str | Path | Iterable[Any], *, source: str | None = None
) -> tuple[ValidationReport, list[tuple[int, str, BaseModel]]]:
    """Validate and also return the good rows as models with their row numbers (for the converter)."""
    name = source or (str(path_or_rows) if isinstance(path_or_rows, (str, Path)) else "<rows>")
    report = ValidationReport(source=name)
    good: list[tuple[int, str, BaseModel]] = []
    for rownum, value in _iter_source(path_or_rows, report):
        report.n_rows += 1
        kind, model, issues = check_row(value)
        report.kinds[kind] += 1
        report.problems.extend(Problem(name, rownum, f, m) for f, m in issues)
        if model is not None:
            good.append((rownum, kind, model))
    if report.n_rows == 0 and not report.problems:
        report.problems.append(Problem(name, 0, "(file)", "no rows"))
    return report, good


def validate_rows(path_or_rows: str | Path | Iterable[Any], *, source: str | None = None) -> ValidationReport:
    """Every problem in a file or a list of rows (dicts or row models); never raises on bad data."""
    return validate_rows_parsed(path_or_rows, source=source)[0]


def validate_file(path: str | Path) -> ValidationReport:
    """The CLI / asset-check entry point: `report.ok`, `str(report)` lists every problem."""
    return validate_rows(Path(path))
