"""The offline teacher: a litellm provider (`env0-oracle/<name>`) that plays a task's oracle solution.

Real teachers' data mixes passes and failures, so the oracle errs: each step of the solution goes
wrong with probability 1 - skill, as one of the mistakes agents really make. Recoverable ones
(unknown tool, malformed call) are followed by the right call; the others (wrong argument, skipped
step, premature stop) are not. The plan is a pure function of (task, skill, seed, run, trial), so
runs are reproducible. The oracle finds its place by matching the conversation against the plan,
so a reply lost to an injected fault is simply played again.

Asked to relabel (metadata `relabel`: the on-policy stage asks for the teacher's next message at a state the
student reached), it answers from the state instead: the solution steps already done (a call of the right tool with
the right arguments whose result was not an error), then the first one not done, or the final answer when all are.
It errs there too, at the same rate, drawn per state.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

from env0_posttrain.tasks.model import Task
from env0_posttrain.tasks.task_paths import NO_PATHS, TaskPaths

from .. import task_registry
from ..llm import register_provider
from .base import Env0Provider, fill_response, first_user_text
from ..shell.tools import FINISH, TERMINAL

MISTAKES = ("wrong_argument", "skipped_step", "unknown_tool", "premature_stop", "malformed_call")
DONE = "Done."


@dataclass(frozen=True)
class Turn:
    """One assistant message of the plan: a single tool call, or the final text."""

    name: str | None = None
    arguments: str | None = None
    content: str | None = None
    mistake: str | None = None

    def message(self, call_id: str) -> dict[str, Any]:
        if self.name is None:
            return {"role": "assistant", "content": self.content}
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}]}

    def matches(self, message: dict[str, Any]) -> bool:
        calls = message.get("tool_calls") or []
        if self.name is None:
            return not calls and (message.get("content") or "") == self.content
        if len(calls) != 1:
            return False
        fn = calls[0].get("function") or {}
        return fn.get("name") == self.name and fn.get("arguments") == self.arguments


def _dumps(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, sort_keys=True)


def _leaves(obj: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _leaves(v, path + (k,))]
    if isinstance(obj, list) and obj and not all(isinstance(x, (str, int, float, bool)) for x in obj):
        return [p for i, v in enumerate(obj) for p in _leaves(v, path + (i,))]
    return [path] if path else []


def _perturb(value: Any, rng: random.Random) -> Any:
    """A near miss: the kind of wrong value an agent copies or guesses."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + rng.choice((-1, 1))
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + value
    if isinstance(value, str):
        if "@" in value:
            local, _, domain = value.partition("@")
            return (local[:-1] or "x") + "@" + domain
        if len(value) > 12 and " " in value:
            return value[: len(value) // 2].rstrip()
        if value:
            last = value[-1]
            return value[:-1] + ("0" if last != "0" else "1")
        return "unknown"
    return value


def wrong_arguments(args: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    wrong = json.loads(json.dumps(args))
    leaves = _leaves(wrong)
    if not leaves:
        return wrong
    path = rng.choice(leaves)
    node = wrong
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = _perturb(node[path[-1]], rng)
    return wrong


def hallucinated_name(name: str, offered: set[str]) -> str:
    parts = name.split("_")
    candidates = []
    if len(parts) >= 3:
        candidates.append("_".join([parts[0], parts[-1], *parts[1:-1]]))  # gmail_send_messages
        candidates.append(f"{parts[0]}_{parts[-1]}")  # gmail_send
    candidates.append(f"{name}_v2")
    for c in candidates:
        if c not in offered and c != name:
            return c
    return f"{name}_tool"


@dataclass(frozen=True)
class OraclePlan:
    turns: list[Turn]
    mistakes: list[str]


def _ending(final: str, shell: bool, mistake: str | None = None) -> Turn:
    """The last turn: the final answer as text, or on the shell surface as OpenHands' `finish` call."""
    return Turn(FINISH, _dumps({"message": final}), mistake=mistake) if shell else Turn(content=final, mistake=mistake)


def plan_episode(task: Task, skill: float, seed: int, surface: str = "tools", paths: TaskPaths = NO_PATHS) -> OraclePlan:
    """The episode's assistant turns and the mistakes planted in them (a skipped step leaves no turn).

    On the shell surface the steps are terminal commands (shell_oracle.py; an env0 task's solve.sh, found through
    `paths`) and the end is a `finish` call; with 'both' the oracle keeps to the API tools (they are offered too)."""
    rng = random.Random(seed)
    shell = surface == "shell"
    if shell:
        from ..shell.oracle import terminal_calls

        calls = [(TERMINAL, args) for args in terminal_calls(task, paths)]
        offered = {TERMINAL, FINISH}
    else:
        calls = [(c.name, c.arguments) for c in task.oracle]
        offered = set(task.tools)
    turns: list[Turn] = []
    mistakes: list[str] = []
    final = task.final_answer if task.final_answer is not None else DONE
    for name, arguments in calls:
        right = Turn(name, _dumps(arguments))
        if rng.random() >= skill:
            choices = [m for m in MISTAKES if m != "wrong_argument" or _leaves(arguments)]
            mistake = rng.choice(choices)
            mistakes.append(mistake)
            if mistake == "skipped_step":
                continue
            if mistake == "premature_stop":
                turns.append(_ending(DONE, shell, mistake))
                return OraclePlan(turns, mistakes)
            if mistake == "wrong_argument":
                turns.append(Turn(name, _dumps(wrong_arguments(arguments, rng)), mistake=mistake))
                continue
            if mistake == "unknown_tool":
                turns.append(Turn(hallucinated_name(name, offered), right.arguments, mistake=mistake))
            else:  # malformed_call: the JSON is cut short, as when generation stops mid-object
                turns.append(Turn(name, right.arguments[: max(1, len(right.arguments) - 2)], mistake=mistake))
        turns.append(right)
    turns.append(_ending(final, shell))
    return OraclePlan(turns, mistakes)


def next_turn(plan: list[Turn], messages: list[dict[str, Any]]) -> tuple[int, Turn]:
    """The first turn of the plan the conversation has not played yet (foreign replies are skipped)."""
    pos = 0
    for m in messages:
        if m.get("role") == "assistant" and pos < len(plan) and plan[pos].matches(m):
            pos += 1
    if pos >= len(plan):
        return len(plan) - 1, plan[-1]  # the plan is over: repeat the final answer
    return pos, plan[pos]


def _call_results(messages: list[dict[str, Any]]) -> dict[str, str]:
    """tool_call_id -> the tool message's content."""
    return {str(m.get("tool_call_id")): m.get("content") or "" for m in messages if m.get("role") == "tool"}


def _failed(content: str) -> bool:
    """A tool result that reports an error (the workspace's `{"ok": false, ...}`); text output counts as done."""
    try:
        payload = json.loads(content)
    except (ValueError, TypeError):
        return False
    return isinstance(payload, dict) and payload.get("ok") is False


def _same_call(fn: dict[str, Any], name: str, arguments: dict[str, Any]) -> bool:
    if fn.get("name") != name:
        return False
    raw = fn.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
    except (ValueError, RecursionError):
        return False
    return args == arguments


def steps_done(calls: list[tuple[str, dict[str, Any]]], messages: list[dict[str, Any]]) -> list[bool]:
    """Which steps of the solution the conversation has done: the step's call, then a result that is no error."""
    results = _call_results(messages)
    done = [False] * len(calls)
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            content = results.get(str(call.get("id")))
            if content is None or _failed(content):
                continue
            for i, (name, arguments) in enumerate(calls):
                if not done[i] and _same_call(fn, name, arguments):
                    done[i] = True
                    break
    return done


def state_turn(task: Task, messages: list[dict[str, Any]], skill: float, seed: int, surface: str = "tools",
               paths: TaskPaths = NO_PATHS) -> Turn:
    """The oracle's next message at any state of a conversation: the first solution step not yet done, else the
    final answer; with probability 1 - skill one of the planted mistakes instead (seeded by `seed` and the state)."""
    shell = surface == "shell"
    if shell:
        from ..shell.oracle import terminal_calls

        calls = [(TERMINAL, args) for args in terminal_calls(task, paths)]
        offered = {TERMINAL, FINISH}
    else:
        calls = [(c.name, c.arguments) for c in task.oracle]
        offered = set(task.tools)
    done = steps_done(calls, messages)
    final = task.final_answer if task.final_answer is not None else DONE
    todo = [i for i, d in enumerate(done) if not d]
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    rng = random.Random(int.from_bytes(hashlib.sha256(f"state|{seed}|{turns}|{done}".encode()).digest()[:8], "big"))
    if not todo:
        return _ending(final, shell)
    name, arguments = calls[todo[0]]
    right = Turn(name, _dumps(arguments))
    if rng.random() < skill:
        return right
    choices = [m for m in MISTAKES if m != "wrong_argument" or _leaves(arguments)]
    mistake = rng.choice(choices)
    if mistake == "skipped_step":
        if len(todo) > 1:
            name, arguments = calls[todo[1]]
            return Turn(name, _dumps(arguments), mistake=mistake)
        return _ending(final, shell, mistake)
    if mistake == "premature_stop":
        return _ending(DONE, shell, mistake)
    if mistake == "wrong_argument":
        return Turn(name, _dumps(wrong_arguments(arguments, rng)), mistake=mistake)
    if mistake == "unknown_tool":
        return Turn(hallucinated_name(name, offered), right.arguments, mistake=mistake)
    return Turn(name, right.arguments[: max(1, len(right.arguments) - 2)], mistake=mistake)


def skill_from_model_id(model: str) -> float | None:
    """'env0-oracle/oracle@0.6' -> 0.6: teachers of different strength as distinct model ids (backfills, tables).
    None when the id names no skill; a ValueError naming the id when the skill is not a number in [0, 1]."""
    name = model.rsplit("/", 1)[-1]
    if "@" not in name:
        return None
    raw = name.rsplit("@", 1)[1]
    try:
        skill = float(raw)
    except ValueError:
        raise ValueError(f"oracle model id {model!r}: skill {raw!r} after '@' is not a number") from None
    if not 0.0 <= skill <= 1.0:
        raise ValueError(f"oracle model id {model!r}: skill {skill} is outside [0, 1]")
    return skill


def episode_plan_seed(seed: int, run_id: str, task_id: str, trial: int) -> int:
    digest = hashlib.sha256(f"oracle|{seed}|{run_id}|{task_id}|{trial}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class OracleProvider(Env0Provider):
    """Options (litellm kwargs): env0_skill (default 1.0), env0_seed (0), env0_latency_s (0)."""

    call_cost = 0.0

    def __init__(self) -> None:
        super().__init__()
        self._plans: dict[tuple, tuple[Task, OraclePlan]] = {}

    def _plan(self, task: Task, skill: float, seed: int, surface: str, paths: TaskPaths) -> OraclePlan:
        """Plans are replayed on every call of an episode; make them once."""
        key = (task.id, skill, seed, surface, paths)
        hit = self._plans.get(key)
        if hit is not None and hit[0] is task:
            return hit[1]
        if len(self._plans) > 8192:
            self._plans.clear()
        plan = plan_episode(task, skill, seed, surface, paths)
        self._plans[key] = (task, plan)
        return plan

    async def respond(self, model, messages, options, meta, model_response):
        task = task_registry.lookup(meta, first_user_text(messages))
        named = skill_from_model_id(model)  # the id's skill wins: a wrapper may forward options it did not set
        skill = named if named is not None else float(options.get("env0_skill", 1.0))
        seed = episode_plan_seed(int(options.get("env0_seed", 0)), str(meta.get("run_id", "")), task.id,
                                 int(meta.get("trial", 0)))
        latency = float(options.get("env0_latency_s", 0.0))
        if latency > 0:
            await asyncio.sleep(latency)
        surface, paths = str(meta.get("surface", "tools")), meta.get("paths") or NO_PATHS
        if meta.get("relabel"):  # the on-policy stage: answer at the student's state, not along a plan
            turn = state_turn(task, messages, skill, seed, surface, paths)
            pos = sum(1 for m in messages if m.get("role") == "assistant")
        else:
            plan = self._plan(task, skill, seed, surface, paths)
            pos, turn = next_turn(plan.turns, messages)
        message = turn.message(call_id=f"call_{pos}")
        return fill_response(model_response, model, message)


def install_oracle() -> None:
    register_provider("env0-oracle", OracleProvider())
