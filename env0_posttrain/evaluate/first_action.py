"""One-shot first-action eval (the seed's "dataset eval"): is the model's first move the oracle's?

It is read from each eval episode's first assistant message, so it costs no extra model calls, and
it separates "cannot even start" (format, tool choice) from "cannot finish" in the live pass rate.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate.metrics import by_arm
from env0_posttrain.evaluate.statistics import ProportionEstimate, proportion_estimate
from env0_posttrain.tasks.model import Task


class FirstActionScore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    trial: int
    format_ok: bool
    name_match: bool
    args_match: bool
    called: str | None


class FirstActionSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    arm: str
    n: int
    format_ok: ProportionEstimate
    name_match: ProportionEstimate
    args_match: ProportionEstimate


def first_tool_call(episode: Episode) -> tuple[bool, str | None, dict[str, Any] | None]:
    """(format ok, tool name, parsed arguments) of the first call in the first assistant message."""
    first = next((m for m in episode.messages if m.get("role") == "assistant"), None)
    calls = (first or {}).get("tool_calls") or []
    if not calls:
        return False, None, None
    fn = calls[0].get("function") or {}
    name, raw = fn.get("name"), fn.get("arguments")
    if not isinstance(name, str) or not name:
        return False, None, None
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return False, name, None
    if not isinstance(args, dict):
        return False, name, None
    offered = {t.get("function", {}).get("name") for t in episode.tools}
    return (name in offered if offered else True), name, args


def score_first_action(episode: Episode, task: Task) -> FirstActionScore:
    if not task.oracle:
        raise ValueError(f"task {task.id}: field 'oracle' is empty; the first-action eval needs oracle[0]")
    want = task.oracle[0]
    ok, name, args = first_tool_call(episode)
    name_match = name == want.name
    return FirstActionScore(
        task_id=episode.task_id, trial=episode.trial, format_ok=ok, name_match=name_match,
        args_match=ok and name_match and _canonical(args) == _canonical(want.arguments), called=name,
    )


def _canonical(value: Any) -> Any:
    """Key order is already free in dict equality; 1 and 1.0 must also match (JSON has one number type)."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, bool):
        return ("bool", value)  # True == 1 in Python, but not in JSON
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def first_action_eval(
    episodes: Sequence[Episode], tasks_by_id: Mapping[str, Task], alpha: float = 0.05
) -> dict[str, FirstActionSummary]:
    out = {}
    for arm, eps in by_arm(episodes).items():
        scores = [score_first_action(e, tasks_by_id[e.task_id]) for e in eps]
        n = len(scores)
        out[arm] = FirstActionSummary(
            arm=arm, n=n,
            format_ok=proportion_estimate(sum(s.format_ok for s in scores), n, alpha),
            name_match=proportion_estimate(sum(s.name_match for s in scores), n, alpha),
            args_match=proportion_estimate(sum(s.args_match for s in scores), n, alpha),
        )
    return out


def first_action_by_family(
    episodes: Sequence[Episode], tasks_by_id: Mapping[str, Task]
) -> dict[str, dict[str, float]]:
    """family -> arm -> args-exact-match rate."""
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for e in episodes:
        task = tasks_by_id[e.task_id]
        hits[(task.family, e.arm)].append(score_first_action(e, task).args_match)
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (fam, arm), v in sorted(hits.items()):
        out[fam][arm] = sum(v) / len(v)
    return dict(out)
