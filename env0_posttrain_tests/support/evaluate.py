"""Builders of real Task / Episode records for the evaluate tests (no tests here)."""

from __future__ import annotations

import json
import random
from typing import Any

from env0_posttrain.agent.records import Episode
from env0_posttrain.tasks.families.names import FAMILIES
from env0_posttrain.tasks.model import StateRecipe, Task, ToolCall, VerifierResult

ORACLE = {
    "auth": ToolCall(name="admin_tokens_list", arguments={"userKey": "ana@acme.test"}),
    "calendar": ToolCall(name="calendar_events_list", arguments={"calendarId": "primary", "maxResults": 10}),
    "docs": ToolCall(name="docs_documents_get", arguments={"documentId": "doc-0001"}),
    "drive": ToolCall(name="drive_files_list", arguments={"q": "name contains 'budget'"}),
    "mail": ToolCall(name="gmail_messages_list", arguments={"userId": "me", "q": "from:bob"}),
    "multi-app": ToolCall(name="slack_conversations_list", arguments={}),
}


def tool_def(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object"}}}


def make_task(i: int, family: str | None = None, difficulty: int = 2) -> Task:
    family = family or FAMILIES[i % len(FAMILIES)]
    first = ORACLE[family]
    return Task(
        id=f"{family}-{i:03d}", family=family, template_id=f"{family}.t{i % 2}", difficulty=difficulty,
        instruction=f"Do task {i}", recipe=StateRecipe(seed=i), oracle=[first, ToolCall(name="drive_files_update")],
        tools=[first.name, "drive_files_update"], oracle_reward=1.0, noop_reward=0.0,
    )


def call(name: str, args: dict[str, Any] | str, cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}


def make_episode(
    arm: str, task: Task, trial: int, passed: bool, *, first: str = "oracle", stop: str = "agent_completed",
    scored: bool = True, agent_errors: int = 0, final_answer: str | None = "Done.", run_id: str = "run-1",
    extra_calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = (),
) -> Episode:
    """first: 'oracle' (oracle's first call), 'wrong_args', 'wrong_tool', 'message' (no tool call), 'bad_json'."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "tools"}, {"role": "user", "content": task.instruction}]
    o = task.oracle[0]
    if first == "message":
        msgs.append({"role": "assistant", "content": "I will look at the files first."})
    else:
        args: Any = {"oracle": o.arguments, "wrong_args": {**o.arguments, "extra": 1}, "wrong_tool": o.arguments,
                     "bad_json": "{not json"}[first]
        name = "drive_files_update" if first == "wrong_tool" else o.name
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call(name, args, "c0")]})
        msgs.append({"role": "tool", "tool_call_id": "c0", "name": name, "content": json.dumps({"ok": True, "result": {}})})
    for k, (name, args, result) in enumerate(extra_calls, start=1):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call(name, args, f"c{k}")]})
        msgs.append({"role": "tool", "tool_call_id": f"c{k}", "name": name, "content": json.dumps(result)})
    msgs.append({"role": "assistant", "content": final_answer})
    verifier = VerifierResult(reward=1.0 if passed else 0.25) if scored else None
    return Episode(
        run_id=run_id, arm=arm, task_id=task.id, trial=trial, model=f"model-{arm}", messages=msgs,
        tools=[tool_def(n) for n in task.tools], final_answer=final_answer, stop_condition=stop,
        verifier=verifier, agent_errors=agent_errors,
    )


def arm_from_counts(
    arm: str, tasks: list[Task], trials: int, passes: int, shuffle_seed: int | None = None, **kw: Any
) -> list[Episode]:
    """Exactly `passes` passing rows over tasks x trials: the first rows in trial-major order, or random rows."""
    cells = [(trial, t) for trial in range(trials) for t in tasks]
    winners = set(range(passes))
    if shuffle_seed is not None:
        winners = set(random.Random(shuffle_seed).sample(range(len(cells)), passes))
    return [make_episode(arm, t, trial, k in winners, **kw) for k, (trial, t) in enumerate(cells)]
