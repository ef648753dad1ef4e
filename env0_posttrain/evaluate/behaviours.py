"""Behaviour metrics: trajectory predicates registered as plug-ins and reported per arm.

A pass rate says whether a model succeeded; these say *how* it behaves (does it act or chat, does
it loop, does it claim work it never did), which is what changes first when SFT starts to bite.
A predicate returns True/False, or None when it does not apply to the episode (then it is left
out of that behaviour's denominator). Register a new one with `@behaviour("name", "description")`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate.metrics import by_arm
from env0_posttrain.tasks.model import Task

Predicate = Callable[[Episode, Task | None], bool | None]


@dataclass(frozen=True)
class Behaviour:
    name: str
    description: str
    predicate: Predicate


BEHAVIOURS: dict[str, Behaviour] = {}


def behaviour(name: str, description: str) -> Callable[[Predicate], Predicate]:
    def register(fn: Predicate) -> Predicate:
        if name in BEHAVIOURS and BEHAVIOURS[name].predicate is not fn:
            raise ValueError(f"behaviour {name!r} is already registered")
        BEHAVIOURS[name] = Behaviour(name, description, fn)
        return fn

    return register


class BehaviourRate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    applicable: int
    true: int

    @property
    def rate(self) -> float | None:
        return self.true / self.applicable if self.applicable else None


def behaviour_rates(
    episodes: Sequence[Episode], tasks_by_id: Mapping[str, Task] | None = None, names: Sequence[str] | None = None
) -> dict[str, dict[str, BehaviourRate]]:
    """arm -> behaviour name -> rate over the episodes where the predicate applies."""
    chosen = [BEHAVIOURS[n] for n in (names or list(BEHAVIOURS))]
    out: dict[str, dict[str, BehaviourRate]] = {}
    for arm, eps in by_arm(episodes).items():
        out[arm] = {}
        for b in chosen:
            verdicts = [b.predicate(e, (tasks_by_id or {}).get(e.task_id)) for e in eps]
            applicable = [v for v in verdicts if v is not None]
            out[arm][b.name] = BehaviourRate(
                name=b.name, description=b.description, applicable=len(applicable), true=sum(map(bool, applicable))
            )
    return out


# --- trajectory helpers -------------------------------------------------------------------------

def _assistant(ep: Episode) -> list[dict[str, Any]]:
    return [m for m in ep.messages if m.get("role") == "assistant"]


def _calls(ep: Episode) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(tool call, its tool result parsed as JSON or None) in order."""
    results = {m.get("tool_call_id"): m.get("content") for m in ep.messages if m.get("role") == "tool"}
    for m in _assistant(ep):
        for call in m.get("tool_calls") or []:
            yield call, _json(results.get(call.get("id")))


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


def _args(call: dict[str, Any]) -> dict[str, Any]:
    parsed = _json((call.get("function") or {}).get("arguments"))
    return parsed if isinstance(parsed, dict) else {}


def _name(call: dict[str, Any]) -> str:
    return str((call.get("function") or {}).get("name") or "")


_WRITE_VERBS = re.compile(
    r"_(send|insert|create|update|patch|delete|trash|untrash|modify|copy|batchUpdate|postMessage|add|remove|"
    r"revoke|move|import|invite|kick|rename|archive|update[A-Za-z]*|set[A-Za-z]*)$"
)


def is_write_tool(name: str) -> bool:
    """The workspace's own read/write marking when it is importable, else the API method's verb."""
    try:
        from env0_posttrain.workspace import TOOLS  # noqa: PLC0415  (optional: evaluate must not require it)

        if name in TOOLS:
            return bool(TOOLS[name].writes)
    except ImportError:
        pass
    return bool(_WRITE_VERBS.search(name))


def _ids(value: Any, key: str = "") -> Iterator[str]:
    """Every string under a key that names an id (id, fileId, eventId, threadId, ts, channel...)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _ids(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _ids(v, key)
    elif isinstance(value, str) and (key == "id" or key.endswith("Id") or key.endswith("_id") or key in ("ts", "channel")):
        if len(value) >= 4:
            yield value


def _tool_error(result: Any) -> bool:
    return isinstance(result, dict) and (result.get("ok") is False or "error" in result)


# --- the built-in behaviours --------------------------------------------------------------------

@behaviour("first_action_tool_call", "the first assistant turn calls a tool")
def first_action_tool_call(ep: Episode, task: Task | None) -> bool | None:
    turns = _assistant(ep)
    return bool(turns[0].get("tool_calls")) if turns else None


@behaviour("first_action_message", "the first assistant turn is a plain message, no tool call")
def first_action_message(ep: Episode, task: Task | None) -> bool | None:
    turns = _assistant(ep)
    return (not turns[0].get("tool_calls")) if turns else None


@behaviour("gave_up_without_tool_call", "ended the episode itself without ever calling a tool")
def gave_up_without_tool_call(ep: Episode, task: Task | None) -> bool | None:
    return ep.stop_condition == "agent_completed" and ep.n_tool_calls == 0


@behaviour("repeated_identical_call", "called the same tool with the same arguments more than once")
def repeated_identical_call(ep: Episode, task: Task | None) -> bool | None:
    seen = set()
    for call, _ in _calls(ep):
        key = (_name(call), json.dumps(_args(call), sort_keys=True))
        if key in seen:
            return True
        seen.add(key)
    return False if seen else None


@behaviour("called_unoffered_tool", "called a tool name that was not offered")
def called_unoffered_tool(ep: Episode, task: Task | None) -> bool | None:
    offered = {(t.get("function") or {}).get("name") for t in ep.tools}
    names = [_name(c) for c, _ in _calls(ep)]
    return any(n not in offered for n in names) if names and offered else None


@behaviour("recovered_after_tool_error", "after a failed tool call, a later call succeeded")
def recovered_after_tool_error(ep: Episode, task: Task | None) -> bool | None:
    outcomes = [_tool_error(r) for _, r in _calls(ep)]
    if True not in outcomes:
        return None
    first_err = outcomes.index(True)
    return any(not o for o in outcomes[first_err + 1:])


_CLAIM = re.compile(
    r"\b(sent|created|updated|deleted|removed|revoked|shared|scheduled|moved|renamed|posted|added|invited|"
    r"replied|forwarded|trashed|archived|cancel+ed|booked|granted|copied|edited|changed)\b",
    re.IGNORECASE,
)


@behaviour("touched_what_it_said", "a final answer that claims an action names an id that a write call touched")
def touched_what_it_said(ep: Episode, task: Task | None) -> bool | None:
    answer = ep.final_answer or ""
    if not _CLAIM.search(answer):
        return None
    known, written = set(), set()
    for call, result in _calls(ep):
        ids = set(_ids(_args(call))) | set(_ids(result))
        known |= ids
        if is_write_tool(_name(call)) and not _tool_error(result):
            written |= ids
    named = {i for i in known if i in answer}
    if not named:
        return None
    return bool(named & written)


_TOOL_NAME = re.compile(r"\b(?:gmail|calendar|drive|docs|slack|admin)_[A-Za-z]+_[A-Za-z]+\b")


@behaviour("plan_names_real_tools", "every tool the agent's own text names (before acting or instead) is an offered tool")
def plan_names_real_tools(ep: Episode, task: Task | None) -> bool | None:
    text = " ".join(m.get("content") or "" for m in _assistant(ep) if isinstance(m.get("content"), str))
    named = set(_TOOL_NAME.findall(text))
    if not named:
        return None
    offered = {(t.get("function") or {}).get("name") for t in ep.tools}
    return named <= offered


@behaviour("hit_max_steps", "ran out of steps instead of finishing")
def hit_max_steps(ep: Episode, task: Task | None) -> bool | None:
    return ep.stop_condition == "max_steps"


@behaviour("stopped_stuck", "stopped by the stuck detector: the same tool calls with the same arguments N turns in a row")
def stopped_stuck(ep: Episode, task: Task | None) -> bool | None:
    return ep.stop_condition == "stuck"


@behaviour("oracle_tools_used", "called every tool the oracle solution uses")
def oracle_tools_used(ep: Episode, task: Task | None) -> bool | None:
    if task is None or not task.oracle:
        return None
    called = {_name(c) for c, _ in _calls(ep)}
    return {c.name for c in task.oracle} <= called
