"""Eval episodes as pandas DataFrames for notebooks: one call per level, read from the store.

    from env0_posttrain.evaluate import frames
    eps = frames.episodes("data/env0.duckdb", run_id="demo")      # one row per episode
    turns = frames.turns("data/env0.duckdb", run_id="demo")       # one row per model call
    calls = frames.tool_calls("data/env0.duckdb", run_id="demo")  # one row per tool call, with its result

Every level carries the keys to join on (run_id, round_id, arm, suite, task_id, trial) and the episode's reward.
By default the rows are the rounds the report counts (the newest finished round per arm and suite, eval arms
only); `latest=False` gives every round (the nightly history), `arms=None` adds the teacher's training rollouts.
For SQL, hand a frame to DuckDB: `duckdb.sql("SELECT arm, avg(reward) FROM eps GROUP BY arm")`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from env0_posttrain.agent.messages import FORMAT_FAILURE_KINDS
from env0_posttrain.evaluate.trajectories import (
    EVAL_ARMS,
    RoundRef,
    instruction_of,
    is_unscored,
    iter_episodes,
    run_identifiers,
    select_rounds,
    task_info,
    task_rows,
)
from env0_posttrain.store import Store
from env0_posttrain.tasks.reward import optimiser_reward

KEYS = ("run_id", "round_id", "arm", "suite", "task_id", "trial")


def _store(store: Store | Path | str) -> Store:
    return store if isinstance(store, Store) else Store(store)


def _walk(store: Store | Path | str, run_id: str | None, arms: Sequence[str] | None, latest: bool,
          ) -> Iterator[tuple[RoundRef, dict[str, Any], dict[str, Any]]]:
    """(round, episode, the key columns) for each episode of the selected rounds."""
    st = _store(store)
    rounds = select_rounds(st, run_id, arms, latest)
    for r, ep in iter_episodes(st, rounds):
        yield r, ep, {"run_id": r.run_id, "round_id": r.round_id, "arm": r.arm, "suite": r.suite,
                      "task_id": ep["task_id"], "trial": ep["trial"], "reward": _reward(ep)}


def _reward(ep: dict[str, Any]) -> float:
    """The verifier's reward; an unscored episode's is the task's minimum (tasks/reward.py), so it never passes."""
    return optimiser_reward(ep)


def episodes(store: Store | Path | str, run_id: str | None = None, *, arms: Sequence[str] | None = EVAL_ARMS,
             latest: bool = True) -> pd.DataFrame:
    """One row per episode: keys, model, reward, passed (reward >= 1), scored, stop condition, counts (turns, tool
    calls, tokens, errors by kind as `errors`, format failures), duration, the verifier's checks / gates / detail,
    the final answer, the task's split / family / template / difficulty / instruction, and the run spec's
    identifiers (run_spec_digest, teacher_model, student_model, task_set_digest)."""
    st = _store(store)
    rows = []
    for _, ep, keys in _walk(st, run_id, arms, latest):
        v = ep.get("verifier") or {}
        counts = ep.get("error_counts") or {}
        usage = ep.get("usage") or {}
        rows.append({
            **keys, "model": ep["model"], "passed": _reward(ep) >= 1.0, "scored": not is_unscored(ep),
            "stop_condition": ep["stop_condition"], "error": ep.get("error"),
            "n_turns": sum(m.get("role") == "assistant" for m in ep["messages"]),
            "n_tool_calls": sum(len(m.get("tool_calls") or []) for m in ep["messages"] if m.get("role") == "assistant"),
            "prompt_tokens": usage.get("prompt_tokens", 0), "completion_tokens": usage.get("completion_tokens", 0),
            "duration_s": ep.get("duration_s", 0.0), "infra_errors": ep.get("infra_errors", 0),
            "agent_errors": ep.get("agent_errors", 0), "format_failures": sum(counts.get(k, 0) for k in FORMAT_FAILURE_KINDS),
            "errors": counts, "checks": v.get("checks") or {}, "gates": v.get("gates") or {}, "detail": v.get("detail", ""),
            "final_answer": ep.get("final_answer"), "instruction": instruction_of(ep), "started_at": ep.get("started_at"),
        })
    frame = pd.DataFrame(rows, columns=None if rows else [*KEYS, "reward"])
    if not rows:
        return frame
    tasks = task_rows(st, frame["run_id"].unique())
    info = [task_info(tasks, r, s, t) for r, s, t in zip(frame["run_id"], frame["suite"], frame["task_id"], strict=True)]
    for col in ("split", "family", "template_id", "difficulty"):
        frame[col] = [i.get(col) for i in info]
    ids = run_identifiers(st, frame["run_id"].unique())
    for col in ("run_spec_digest", "teacher_model", "student_model", "task_set_digest"):
        frame[col] = [ids[r][col] for r in frame["run_id"]]
    return frame


def turns(store: Store | Path | str, run_id: str | None = None, *, arms: Sequence[str] | None = EVAL_ARMS,
          latest: bool = True) -> pd.DataFrame:
    """One row per model call (turn): keys, turn index, prompt / completion tokens, latency, finish reason,
    attempts, error and its kind (infra / agent), the number of tool calls the reply made and its text."""
    rows = []
    for _, ep, keys in _walk(store, run_id, arms, latest):
        for ex in ep.get("exchanges", []):
            reply = ex.get("response") or {}
            usage = ex.get("usage") or {}
            rows.append({**keys, "turn": ex["index"], "prompt_tokens": usage.get("prompt_tokens", 0),
                         "completion_tokens": usage.get("completion_tokens", 0), "latency_s": ex.get("latency_s", 0.0),
                         "finish_reason": ex.get("finish_reason"), "attempts": ex.get("attempts", 1),
                         "error": ex.get("error"), "error_kind": ex.get("error_kind"),
                         "n_tool_calls": len(reply.get("tool_calls") or []), "content": reply.get("content")})
    return pd.DataFrame(rows, columns=None if rows else [*KEYS, "reward", "turn"])


def _result(message: dict[str, Any] | None) -> tuple[bool | None, str | None, str | None]:
    """(ok, error text, content) of a tool message; its content is the JSON payload the agent was shown."""
    if message is None:
        return None, None, None
    content = message.get("content")
    try:
        payload = json.loads(content) if isinstance(content, str) else None
    except ValueError:  # a payload cut at tool_result_max_chars is no longer JSON
        payload = None
    if isinstance(payload, dict) and "ok" in payload:
        err = payload.get("error")
        return bool(payload["ok"]), (json.dumps(err) if err is not None and not isinstance(err, str) else err), content
    return None, None, content


def tool_calls(store: Store | Path | str, run_id: str | None = None, *, arms: Sequence[str] | None = EVAL_ARMS,
               latest: bool = True) -> pd.DataFrame:
    """One row per tool call: keys, turn (the assistant message's index among assistant messages), position in the
    turn, tool name, arguments (the JSON string as the model wrote it), ok / error / result as the tool returned."""
    rows = []
    for _, ep, keys in _walk(store, run_id, arms, latest):
        msgs = ep["messages"]
        results = {m.get("tool_call_id"): m for m in msgs if m.get("role") == "tool"}
        turn = -1
        for m in msgs:
            if m.get("role") != "assistant":
                continue
            turn += 1
            for pos, call in enumerate(m.get("tool_calls") or []):
                fn = call.get("function") or {}
                ok, err, content = _result(results.get(call.get("id")))
                rows.append({**keys, "turn": turn, "position": pos, "call_id": call.get("id"), "tool": fn.get("name"),
                             "arguments": fn.get("arguments"), "ok": ok, "error": err, "result": content})
    return pd.DataFrame(rows, columns=None if rows else [*KEYS, "reward", "turn", "tool"])
