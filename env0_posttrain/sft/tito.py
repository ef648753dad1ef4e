"""Token-in/token-out (TITO) rows: per assistant turn, the exact prompt ids and the completion ids.

Chat-row SFT re-renders text, so the student may be trained on ids it never produces at
inference (template drift, tokenisation merges across turn boundaries). TITO rows take the
ids the model server captured (native) or re-render each turn with the student's chat
template; `drift_check` shows where the two disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal


from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft.convert import ConversionReport, check_counts, read_results
from env0_posttrain.sft.curation import CurationReport, Example, curate
from env0_posttrain.sft.jsonl_io import write_jsonl_atomic
from env0_posttrain.sft.results import ResultsRow
from env0_posttrain.sft.rows import TitoRow, to_trl_message
from env0_posttrain.sft.tokens import end_of_turn_id, render_ids
from env0_posttrain.sft.validation import Problem, validate_rows_parsed


def _assistant_turn_index(messages: list[dict[str, Any]], upto: int) -> int:
    return sum(1 for m in messages[:upto] if m.get("role") == "assistant")


def native_turns(row: ResultsRow) -> list[tuple[int, list[int], list[int]]] | None:
    """(turn, prompt ids, completion ids) for every assistant turn, or None if any turn lacks captured ids."""
    messages = row.messages
    n_turns = _assistant_turn_index(messages, len(messages))
    turns: dict[int, tuple[list[int], list[int]]] = {}
    for ex in row.trajectory:
        if ex.response is None or ex.error or not ex.prompt_token_ids or not ex.completion_token_ids:
            continue
        if ex.request_len >= len(messages) or messages[ex.request_len].get("role") != "assistant":
            continue
        turns[_assistant_turn_index(messages, ex.request_len)] = (ex.prompt_token_ids, ex.completion_token_ids)
    if n_turns == 0 or len(turns) != n_turns:
        return None
    return [(t, *turns[t]) for t in range(n_turns)]


def _cut_after_end_of_turn(ids: list[int], eot: int | None) -> list[int]:
    if eot is not None and eot in ids:
        return ids[: ids.index(eot) + 1]
    return ids


def retokenised_turns(messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                      tokenizer: Any) -> list[tuple[int, list[int], list[int]]]:
    """Render each assistant turn with the tokenizer's chat template: prompt + generation prompt, then the turn.

    Raises ValueError when the rendered prompt is not a prefix of the rendered turn (a template
    that renders history differently from a live prompt cannot give token-exact rows).
    """
    trl = [to_trl_message(m) for m in messages]
    eot = end_of_turn_id(tokenizer)
    out = []
    turn = 0
    for j, msg in enumerate(trl):
        if msg.get("role") != "assistant":
            continue
        prompt = render_ids(trl[:j], tools, tokenizer, add_generation_prompt=True)
        full = render_ids(trl[: j + 1], tools, tokenizer)
        if full[: len(prompt)] != prompt:
            raise ValueError(f"turn {turn}: the rendered prompt is not a prefix of the rendered turn")
        output = _cut_after_end_of_turn(full[len(prompt):], eot)
        if not output:
            raise ValueError(f"turn {turn}: renders to no tokens")
        out.append((turn, prompt, output))
        turn += 1
    return out


def _rows_for_example(ex: Example, policy: SFTDataPolicy, tokenizer: Any,
                      report: CurationReport) -> tuple[list[TitoRow], str | None]:
    shaped = ex.messages != ex.row.messages
    turns = None
    origin: Literal["native", "retokenised"] = "native"
    if policy.tito_source in ("auto", "native") and not shaped:
        turns = native_turns(ex.row)
    if turns is None:
        if policy.tito_source == "native":
            return [], "no_native_ids" if not shaped else "native_ids_do_not_match_policy"
        if tokenizer is None:
            return [], "no_tokenizer_for_retokenising"
        try:
            turns = retokenised_turns(ex.messages, ex.row.tool_defs, tokenizer)
        except ValueError as err:
            return [], f"template_not_prefix_stable: {err}"
        origin = "retokenised"
    rows: list[TitoRow] = []
    for turn, prompt, output in turns:
        first = turn < policy.first_turns and policy.first_turn_weight > 1
        weight = float(policy.first_turn_weight) if first and policy.upweight_mode == "weight" else 1.0
        copies = policy.first_turn_weight if first and policy.upweight_mode == "repeat" else 1
        for k in range(copies):
            src = ex.source.model_copy(update={"repeat": k})
            rows.append(TitoRow(input_ids=prompt, output_ids=output, weight=weight, turn=turn, origin=origin,
                                source=src))
            report.n_upweight_copies += int(k > 0)
    return rows, None


def build_tito_rows(
    path_or_rows: str | Path | Iterable[Any],
    policy: SFTDataPolicy,
    *,
    tokenizer: Any = None,
    max_seq_length: int | None = None,
    expected_episodes: int | None = None,
) -> tuple[list[TitoRow], ConversionReport]:
    """Per-turn TITO rows from results rows; per-turn rows longer than max_seq_length are dropped and counted."""
    rows_in, report = read_results(path_or_rows, "tito", expected_episodes)
    results_file = str(path_or_rows) if isinstance(path_or_rows, (str, Path)) else None
    cur = report.curation
    examples, _ = curate(rows_in, policy, results_file=results_file, report=cur)
    cur.length_checked = max_seq_length is not None
    out: list[TitoRow] = []
    for ex in examples:
        rows, reason = _rows_for_example(ex, policy, tokenizer, cur)
        if reason:
            cur.n_kept_episodes -= 1
            cur.skip(ex.source.results_row or 0, ex.row, reason.split(":")[0], reason)
            continue
        if max_seq_length is not None:
            fits = [r for r in rows if len(r.input_ids) + len(r.output_ids) <= max_seq_length]
            cur.n_overlength += len({r.turn for r in rows}) - len({r.turn for r in fits})
            cur.n_turns_dropped_overlength = cur.n_overlength
            rows = fits
            if not rows:
                cur.n_kept_episodes -= 1
                cur.skip(ex.source.results_row or 0, ex.row, "overlength", "every turn exceeds max_seq_length")
                continue
        out.extend(rows)
    check_counts(report, len(out))
    return out, report


def write_tito_jsonl(rows: Iterable[TitoRow], path: str | Path) -> int:
    return write_jsonl_atomic(list(rows), path)


@dataclass(frozen=True)
class Drift:
    row: int
    episode_key: str
    exchange: int
    part: Literal["input", "output"]
    first_diff: int
    n_captured: int
    n_rendered: int
    captured: str
    rendered: str

    def __str__(self) -> str:
        return (f"row {self.row} ({self.episode_key}) exchange {self.exchange} {self.part}: ids differ from "
                f"position {self.first_diff} (captured {self.n_captured} ids, rendered {self.n_rendered}): "
                f"captured {self.captured!r} vs rendered {self.rendered!r}")


@dataclass
class DriftReport:
    source: str
    n_rows: int = 0
    n_exchanges_checked: int = 0
    n_exchanges_without_ids: int = 0
    drifts: list[Drift] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def drifted_rows(self) -> list[int]:
        return sorted({d.row for d in self.drifts})

    @property
    def ok(self) -> bool:
        return not self.drifts and not self.problems

    def __str__(self) -> str:
        head = (f"{self.source}: {self.n_rows} rows, {self.n_exchanges_checked} exchanges checked, "
                f"{self.n_exchanges_without_ids} without captured ids, {len(self.drifted_rows)} rows drifted")
        return "\n".join([head, *(f"  {d}" for d in self.drifts), *(f"  {p}" for p in self.problems)])


def _first_diff(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def drift_check(path_or_rows: str | Path | Iterable[Any], tokenizer: Any) -> DriftReport:
    """Re-render every captured exchange with the student's template; report each whose ids differ."""
    validation, good = validate_rows_parsed(path_or_rows)
    report = DriftReport(source=validation.source, problems=list(validation.problems))
    eot = end_of_turn_id(tokenizer)
    for rownum, _, row in good:
        if not isinstance(row, ResultsRow):
            continue
        report.n_rows += 1
        trl = [to_trl_message(m) for m in row.messages]
        for ex in row.trajectory:
            if ex.response is None or not ex.prompt_token_ids or not ex.completion_token_ids:
                report.n_exchanges_without_ids += 1
                continue
            report.n_exchanges_checked += 1
            prompt = render_ids(trl[: ex.request_len], row.tool_defs, tokenizer, add_generation_prompt=True)
            full = render_ids([*trl[: ex.request_len], to_trl_message(ex.response)], row.tool_defs, tokenizer)
            output = _cut_after_end_of_turn(full[_first_diff(prompt, full) or len(prompt):], eot)
            for part, captured, rendered in (("input", ex.prompt_token_ids, prompt),
                                             ("output", ex.completion_token_ids, output)):
                at = _first_diff(captured, rendered)
                if at is None:
                    continue
                report.drifts.append(Drift(
                    row=rownum, episode_key=row.episode_key, exchange=ex.index, part=part, first_diff=at,
                    n_captured=len(captured), n_rendered=len(rendered),
                    captured=tokenizer.decode(captured[at: at + 12]), rendered=tokenizer.decode(rendered[at: at + 12]),
                ))
    return report
