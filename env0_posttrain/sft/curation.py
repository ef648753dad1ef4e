"""The SFT data policy applied to validated results rows: which episodes become rows, and how they are shaped.

Small-set distillation is data-shape sensitive (the TITO seed): think spans, steering prompts,
first-turn weight and silent truncation all change what the student learns, so each step here
is explicit in the run spec and every row left out is counted with its reason.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft.message_rules import check_conversation, tool_names_from_defs
from env0_posttrain.sft.results import ResultsRow
from env0_posttrain.sft.rows import SourceRef, to_trl_message
from env0_posttrain.sft.tokens import count_tokens
from env0_posttrain.tasks.reward import is_unscored

THINK_SPAN = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


@dataclass
class Example:
    """One training conversation (OpenAI-format messages) and the episode it came from."""

    row: ResultsRow
    messages: list[dict[str, Any]]
    source: SourceRef
    n_tokens: int | None = None


@dataclass(frozen=True)
class Skipped:
    row: int
    episode_key: str
    reason: str
    detail: str = ""


@dataclass
class CurationReport:
    n_input: int = 0
    n_kept_episodes: int = 0
    skipped: Counter = field(default_factory=Counter)
    skipped_rows: list[Skipped] = field(default_factory=list)
    length_checked: bool = False
    n_overlength: int = 0
    n_windows: int = 0
    n_turns_dropped_overlength: int = 0
    n_upweight_copies: int = 0

    def skip(self, rownum: int, row: ResultsRow | None, reason: str, detail: str = "") -> None:
        self.skipped[reason] += 1
        self.skipped_rows.append(Skipped(rownum, row.episode_key if row else "", reason, detail))


def strip_steering(messages: list[dict[str, Any]], steering: str) -> list[dict[str, Any]] | None:
    """Remove the teacher-only steering text from the system message; None if it remains anywhere."""
    out = copy.deepcopy(messages)
    if out and out[0].get("role") == "system" and isinstance(out[0].get("content"), str):
        remaining = out[0]["content"].replace(steering, "").strip()
        if remaining:
            out[0]["content"] = remaining
        else:
            out.pop(0)
    if any(isinstance(m.get("content"), str) and steering in m["content"] for m in out):
        return None
    return out


def strip_think(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Drop <think> spans and reasoning fields from assistant turns; None if a span is unbalanced."""
    out = copy.deepcopy(messages)
    for msg in out:
        if msg.get("role") != "assistant":
            continue
        msg.pop("reasoning_content", None)
        msg.pop("reasoning", None)
        content = msg.get("content")
        if isinstance(content, str):
            content = THINK_SPAN.sub("", content)
            if "<think>" in content or "</think>" in content:
                return None
            msg["content"] = content.strip() if content.strip() else ("" if msg.get("tool_calls") else content)
    return out


def _source(row: ResultsRow, rownum: int, results_file: str | None) -> SourceRef:
    return SourceRef(
        run_id=row.info.run_id, arm=row.info.arm, task_id=row.info.task_id, trial=row.info.trial,
        example_id=row.example_id, episode_key=row.episode_key, results_file=results_file,
        results_row=rownum,
    )


def select_rows(
    rows: list[tuple[int, ResultsRow]], policy: SFTDataPolicy, report: CurationReport
) -> list[tuple[int, ResultsRow]]:
    """Readiness, minimum reward, one canonical row per episode, per-task caps (best reward first)."""
    kept: list[tuple[int, ResultsRow]] = []
    seen: set[tuple[str, str, str, int]] = set()
    for rownum, row in rows:
        if not row.info.training_ready:
            report.skip(rownum, row, "not_training_ready", row.info.training_ready_reason)
            continue
        if policy.min_reward is not None:
            if is_unscored(row.model_dump(include={"reward", "stop_condition"})):  # never admitted, whatever the floor
                report.skip(rownum, row, "no_reward", row.error or row.stop_condition)
                continue
            if row.reward < policy.min_reward:
                report.skip(rownum, row, "below_min_reward", f"{row.reward} < {policy.min_reward}")
                continue
        key = (row.info.run_id, row.info.arm, row.info.task_id, row.info.trial)
        if policy.canonical_only and key in seen:
            report.skip(rownum, row, "duplicate_episode", "a row for this task and trial was already kept")
            continue
        seen.add(key)
        kept.append((rownum, row))
    if policy.max_rows_per_task is None:
        return kept
    by_task: dict[str, list[tuple[int, ResultsRow]]] = {}
    for item in kept:
        by_task.setdefault(item[1].info.task_id, []).append(item)
    allowed: set[int] = set()  # row numbers
    for items in by_task.values():
        ranked = sorted(items, key=lambda it: (-(it[1].reward if it[1].reward is not None else -2.0),
                                               it[1].info.trial, it[0]))
        allowed.update(rownum for rownum, _ in ranked[: policy.max_rows_per_task])
        for rownum, row in ranked[policy.max_rows_per_task:]:
            report.skip(rownum, row, "over_task_cap", f"max_rows_per_task={policy.max_rows_per_task}")
    return [it for it in kept if it[0] in allowed]


def expected_episodes(rows: list[ResultsRow], policy: SFTDataPolicy) -> int:
    """Episodes the selection policy keeps (readiness, reward floor, canonical, caps), from the rows' own fields.

    Conversion must keep at least this many: anything lost after selection (shaping, length,
    validation) is a loss the caller wants to hear about, not a quiet shrink.
    """
    return len(select_rows(list(enumerate(rows, start=1)), policy, CurationReport()))


def _turn_groups(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """Head (up to the first assistant turn) and groups that each start with an assistant turn."""
    first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
    groups: list[list[dict[str, Any]]] = []
    for msg in messages[first:]:
        if msg.get("role") == "assistant" or not groups:
            groups.append([])
        groups[-1].append(msg)
    return messages[:first], groups


def windows(messages: list[dict[str, Any]], tools: list[dict[str, Any]], tokenizer: Any,
            max_len: int) -> tuple[list[tuple[list[dict[str, Any]], int]], int]:
    """Split a long conversation into windows of head + consecutive turns that fit max_len.

    A turn keeps its tool responses, so every window is still a valid conversation. Returns the
    windows with their token counts and the number of turns too long to fit even alone.
    """
    head, groups = _turn_groups(messages)
    out: list[tuple[list[dict[str, Any]], int]] = []
    dropped = 0
    i = 0
    while i < len(groups):
        window = head + groups[i]
        n = count_tokens(window, tools, tokenizer)
        if n > max_len:
            dropped += 1
            i += 1
            continue
        j = i + 1
        while j < len(groups):
            n_next = count_tokens(window + groups[j], tools, tokenizer)
            if n_next > max_len:
                break
            window, n, j = window + groups[j], n_next, j + 1
        out.append((window, n))
        i = j
    return out, dropped


def shape_example(rownum: int, row: ResultsRow, policy: SFTDataPolicy, report: CurationReport,
                  results_file: str | None) -> Example | None:
    """Steering and think stripping, then a re-check: stripping must never leave an invalid row."""
    messages = copy.deepcopy(row.messages)
    steering = row.info.steering_prompt
    if policy.strip_steering and steering:
        stripped = strip_steering(messages, steering)
        if stripped is None:
            report.skip(rownum, row, "steering_not_strippable", "steering prompt found outside the system message")
            return None
        messages = stripped
    if policy.strip_think:
        stripped = strip_think(messages)
        if stripped is None:
            report.skip(rownum, row, "unbalanced_think", "a <think> or </think> without its pair")
            return None
        messages = stripped
    names, _ = tool_names_from_defs(row.tool_defs)
    issues = check_conversation([(f"messages[{i}]", m) for i, m in enumerate(messages)], names)
    if issues:
        report.skip(rownum, row, "invalid_after_shaping", f"{issues[0][0]}: {issues[0][1]}")
        return None
    return Example(row=row, messages=messages, source=_source(row, rownum, results_file))


def curate(
    rows: list[tuple[int, ResultsRow]],
    policy: SFTDataPolicy,
    *,
    tokenizer: Any = None,
    max_seq_length: int | None = None,
    results_file: str | None = None,
    report: CurationReport | None = None,
) -> tuple[list[Example], CurationReport]:
    """Select and shape rows; with a tokenizer, drop or window rows longer than max_seq_length."""
    report = report or CurationReport()
    report.n_input += len(rows)
    report.length_checked = tokenizer is not None and max_seq_length is not None
    examples: list[Example] = []
    for rownum, row in select_rows(rows, policy, report):
        ex = shape_example(rownum, row, policy, report, results_file)
        if ex is None:
            continue
        if not report.length_checked:
            examples.append(ex)
            report.n_kept_episodes += 1
            continue
        trl_msgs = [to_trl_message(m) for m in ex.messages]
        ex.n_tokens = count_tokens(trl_msgs, row.tool_defs, tokenizer)
        if ex.n_tokens <= max_seq_length:
            examples.append(ex)
            report.n_kept_episodes += 1
            continue
        report.n_overlength += 1
        if policy.overlength == "drop":
            report.skip(rownum, row, "overlength", f"{ex.n_tokens} tokens > max_seq_length {max_seq_length}")
            continue
        # Window in TRL form (what is measured is what is trained), then map back by position.
        wins, dropped = windows(trl_msgs, row.tool_defs, tokenizer, max_seq_length)
        report.n_turns_dropped_overlength += dropped
        if not wins:
            report.skip(rownum, row, "overlength_unwindowable",
                        f"{ex.n_tokens} tokens; no turn fits max_seq_length {max_seq_length}")
            continue
        index = {id(m): i for i, m in enumerate(trl_msgs)}
        for w, (win, n) in enumerate(wins):
            msgs = [ex.messages[index[id(m)]] for m in win]
            src = ex.source.model_copy(update={"window": w})
            examples.append(Example(row=row, messages=copy.deepcopy(msgs), source=src, n_tokens=n))
        report.n_windows += len(wins)
        report.n_kept_episodes += 1
    return examples, report


def first_turn_copies(ex: Example, policy: SFTDataPolicy) -> list[Example]:
    """Extra copies of the conversation cut after the first `first_turns` assistant turns (repetition upweighting)."""
    if policy.first_turn_weight <= 1 or (ex.source.window or 0) > 0:
        return []
    seen = 0
    cut = len(ex.messages)
    for i, msg in enumerate(ex.messages):
        if msg.get("role") == "assistant":
            seen += 1
            if seen == policy.first_turns:
                cut = i + 1
                break
    prefix = ex.messages[:cut]
    return [
        Example(row=ex.row, messages=copy.deepcopy(prefix), source=ex.source.model_copy(update={"repeat": k}))
        for k in range(1, policy.first_turn_weight)
    ]
