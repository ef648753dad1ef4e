"""What the explorer page reads: a task-list index (one row per suite x task, each arm's summary) and, per task,
its episodes slimmed to what a reader looks at.

Kept out of the page: token ids, the tool definitions (their names stay) and repeats of the system prompt
(each distinct text is stored once per task file and referenced).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from env0_posttrain.agent.messages import FORMAT_FAILURE_KINDS
from env0_posttrain.evaluate.statistics import task_solved
from env0_posttrain.evaluate.trajectories import instruction_of, is_unscored
from env0_posttrain.tasks.reward import optimiser_reward

ARM_ORDER = ("base", "sft", "teacher_eval", "rl", "onpolicy")
ARM_LABELS = {"base": "base", "sft": "adapter", "teacher_eval": "teacher", "rl": "RL", "onpolicy": "on-policy"}
INDEX_ARM_FIELDS = ("passes", "trials", "mean_reward", "format_failures", "unscored")
SEARCH_CHARS = 600  # of the instruction, in the index: enough to search and to show a line


def arm_key(arm: str) -> tuple[int, str]:
    return (ARM_ORDER.index(arm) if arm in ARM_ORDER else len(ARM_ORDER), arm)


def format_failures(ep: Mapping[str, Any]) -> int:
    counts = ep.get("error_counts") or {}
    return sum(counts.get(k, 0) for k in FORMAT_FAILURE_KINDS)


def _reward(ep: Mapping[str, Any]) -> float:
    """As evaluate.frames: an unscored episode's reward is the task's minimum, so it never passes."""
    return optimiser_reward(ep)


def _detail(detail: str) -> Any:
    """env0's verifier keeps the package's reward.json as JSON text in `detail`: parsed, so the page can show it."""
    if detail.startswith("{"):
        try:
            return json.loads(detail)
        except ValueError:
            return None
    return None


def _message(m: Mapping[str, Any], systems: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.get("role")}
    if m.get("role") == "system":
        text = m.get("content") or ""
        if text not in systems:
            systems.append(text)
        out["ref"] = systems.index(text)
        return out
    for key in ("content", "name", "tool_call_id", "reasoning_content"):
        if m.get(key):
            out[key] = m[key]
    if m.get("tool_calls"):
        out["tool_calls"] = [{"id": c.get("id"), "name": (c.get("function") or {}).get("name"),
                              "arguments": (c.get("function") or {}).get("arguments")} for c in m["tool_calls"]]
    return out


def _turn(ex: Mapping[str, Any]) -> dict[str, Any]:
    usage = ex.get("usage") or {}
    out = {"index": ex.get("index"), "at": ex.get("request_len"), "prompt_tokens": usage.get("prompt_tokens", 0),
           "completion_tokens": usage.get("completion_tokens", 0), "latency_s": round(ex.get("latency_s") or 0.0, 3),
           "finish_reason": ex.get("finish_reason"), "attempts": ex.get("attempts", 1)}
    if ex.get("error"):
        out |= {"error": ex["error"], "error_kind": ex.get("error_kind"), "failed": ex.get("response") is None}
    return out


def episode_view(ep: Mapping[str, Any], systems: list[str]) -> dict[str, Any]:
    """One episode as the task view shows it: transcript, turns, errors, verifier, workspace diff."""
    v = ep.get("verifier")
    usage = ep.get("usage") or {}
    verifier = None
    if v is not None:
        verifier = {"reward": v.get("reward"), "checks": v.get("checks") or {}, "gates": v.get("gates") or {},
                    "detail": v.get("detail", ""), "reward_json": _detail(v.get("detail") or "")}
    return {
        "trial": ep["trial"], "model": ep.get("model"), "reward": _reward(ep), "passed": _reward(ep) >= 1.0,
        "scored": not is_unscored(ep), "stop_condition": ep.get("stop_condition"), "error": ep.get("error"),
        "final_answer": ep.get("final_answer"), "duration_s": round(ep.get("duration_s") or 0.0, 3),
        "prompt_tokens": usage.get("prompt_tokens", 0), "completion_tokens": usage.get("completion_tokens", 0),
        "errors": ep.get("error_counts") or {}, "infra_errors": ep.get("infra_errors", 0),
        "agent_errors": ep.get("agent_errors", 0), "format_failures": format_failures(ep),
        "steered": bool(ep.get("steering_prompt")), "verifier": verifier, "workspace_diff": ep.get("workspace_diff"),
        "tools": [(t.get("function") or {}).get("name") for t in ep.get("tools") or []],
        "messages": [_message(m, systems) for m in ep.get("messages", [])],
        "turns": [_turn(ex) for ex in ep.get("exchanges", [])],
    }


def arm_summary(eps: list[Mapping[str, Any]]) -> dict[str, Any]:
    """passes / trials, mean reward, episodes with a format failure, unscored episodes."""
    n = len(eps)
    passes = sum(_reward(e) >= 1.0 for e in eps)
    return {"passes": passes, "trials": n, "mean_reward": round(sum(_reward(e) for e in eps) / n, 4) if n else None,
            "format_failures": sum(format_failures(e) > 0 for e in eps), "unscored": sum(is_unscored(e) for e in eps),
            "solved": task_solved(passes, n)}


def flip(arms: Mapping[str, Mapping[str, Any]]) -> str | None:
    """base -> adapter at the task level, as the report's flip table says it."""
    if "base" not in arms or "sft" not in arms:
        return None
    a, b = arms["base"]["solved"], arms["sft"]["solved"]
    return {(False, True): "fail→pass", (True, False): "pass→fail", (True, True): "both pass"}.get((a, b), "both fail")


def task_payload(key: int, task_id: str, suite: str, task: Mapping[str, Any],
                 by_arm: Mapping[str, list[Mapping[str, Any]]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(index row, task file payload) for one suite x task; `by_arm`: arm -> its episodes (dicts, any order)."""
    arms = {a: sorted(by_arm[a], key=lambda e: e["trial"]) for a in sorted(by_arm, key=arm_key)}
    first = next(iter(arms.values()))[0]
    instruction = task.get("instruction") or instruction_of(first)
    summaries = {a: arm_summary(eps) for a, eps in arms.items()}
    meta = {"key": key, "task_id": task_id, "suite": suite, "split": task.get("split"), "family": task.get("family"),
            "template_id": task.get("template_id"), "difficulty": task.get("difficulty")}
    compact = {a: [s[f] for f in INDEX_ARM_FIELDS] for a, s in summaries.items()}  # 2,000 rows stay small
    row = {**meta, "instruction": instruction[:SEARCH_CHARS], "arms": compact, "flip": flip(summaries)}
    systems: list[str] = []
    episodes = {a: [episode_view(e, systems) for e in eps] for a, eps in arms.items()}
    return row, {**meta, "instruction": instruction, "arms": summaries, "flip": row["flip"], "systems": systems,
                 "episodes": episodes}


def index_payload(rows: Iterable[Mapping[str, Any]], header: Mapping[str, Any]) -> dict[str, Any]:
    rows = list(rows)
    arms = sorted({a for r in rows for a in r["arms"]}, key=arm_key)

    def values(key: str) -> list[str]:
        return sorted({str(r[key]) for r in rows if r.get(key) is not None})

    return {**header, "arms": arms, "arm_fields": list(INDEX_ARM_FIELDS), "arm_labels": {a: ARM_LABELS.get(a, a) for a in arms}, "suites": values("suite"),
            "families": values("family"), "templates": values("template_id"), "tasks": rows}
