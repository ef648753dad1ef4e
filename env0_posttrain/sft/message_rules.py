"""The structural rules every conversation must satisfy before it may become a training row.

They are the failures the reference loop's users hit: two system messages, tool responses
answering nothing, arguments that are not a JSON object, calls to tools that were never
offered, rows with no assistant turn, oracle data leaking into training rows. Each rule returns
(field, message) pairs so the caller can add the file and the row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

ROLES = ("system", "user", "assistant", "tool")

# Keys that only the task generator and verifier may see; a training row holding one leaks the answer.
BANNED_KEYS = frozenset(
    {"gold", "gold_answer", "gold_solution", "initial_db", "initial_state", "oracle", "oracle_solution",
     "oracle_reward", "expected_answer", "recipe", "verifier_state"}
)

Issue = tuple[str, str]


def tool_names_from_defs(tool_defs: Any, field: str = "tool_defs") -> tuple[set[str], list[Issue]]:
    """Names of OpenAI function tools; a malformed definition is an issue, never a crash."""
    issues: list[Issue] = []
    names: set[str] = set()
    if isinstance(tool_defs, str):
        try:
            tool_defs = json.loads(tool_defs)
        except json.JSONDecodeError as err:
            return names, [(field, f"is a string but not JSON: {err.msg}")]
    if not isinstance(tool_defs, list):
        return names, [(field, f"must be a list of tool definitions, got {type(tool_defs).__name__}")]
    for i, tool in enumerate(tool_defs):
        where = f"{field}[{i}]"
        if not isinstance(tool, dict):
            issues.append((where, f"must be an object, got {type(tool).__name__}"))
            continue
        if tool.get("type") != "function":
            issues.append((f"{where}.type", f"must be 'function', got {tool.get('type')!r}"))
        fn = tool.get("function")
        if not isinstance(fn, dict):
            issues.append((f"{where}.function", "missing or not an object"))
            continue
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            issues.append((f"{where}.function.name", "missing or empty"))
            continue
        if name in names:
            issues.append((f"{where}.function.name", f"duplicate tool name {name!r}"))
        names.add(name)
        params = fn.get("parameters")
        if params is not None and not isinstance(params, dict):
            issues.append((f"{where}.function.parameters", "must be a JSON schema object"))
    return names, issues


def parse_arguments(arguments: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Tool-call arguments as a dict: OpenAI sends a JSON string, TRL rows hold a dict."""
    if isinstance(arguments, dict):
        return arguments, None
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError as err:
            return None, f"is not valid JSON: {err.msg}"
        if not isinstance(value, dict):
            return None, f"must be a JSON object, got JSON {type(value).__name__}"
        return value, None
    return None, f"must be a JSON object (or its JSON string), got {type(arguments).__name__}"


def _check_tool_calls(where: str, calls: Any, tool_names: set[str] | None, pending: dict[str, str]) -> list[Issue]:
    issues: list[Issue] = []
    if not isinstance(calls, list):
        return [(f"{where}.tool_calls", f"must be a list, got {type(calls).__name__}")]
    for j, call in enumerate(calls):
        cw = f"{where}.tool_calls[{j}]"
        if not isinstance(call, dict):
            issues.append((cw, f"must be an object, got {type(call).__name__}"))
            continue
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id.strip():
            issues.append((f"{cw}.id", "call id missing or empty"))
        elif call_id in pending:
            issues.append((f"{cw}.id", f"call id {call_id!r} is already pending"))
        if call.get("type") != "function":
            issues.append((f"{cw}.type", f"must be 'function', got {call.get('type')!r}"))
        fn = call.get("function")
        if not isinstance(fn, dict):
            issues.append((f"{cw}.function", "missing or not an object"))
            continue
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            issues.append((f"{cw}.function.name", "missing or empty"))
        elif tool_names is not None and name not in tool_names:
            issues.append((f"{cw}.function.name", f"tool {name!r} is not in tool_defs"))
        if "arguments" not in fn:
            issues.append((f"{cw}.function.arguments", "missing"))
        else:
            _, err = parse_arguments(fn["arguments"])
            if err:
                issues.append((f"{cw}.function.arguments", err))
        if isinstance(call_id, str) and call_id.strip():
            pending[call_id] = name if isinstance(name, str) else ""
    return issues


def check_conversation(messages: Sequence[tuple[str, Any]], tool_names: set[str] | None) -> list[Issue]:
    """Check a conversation given as (field, message) pairs in order.

    `tool_names=None` skips the tool-name check (used when tool_defs are themselves broken,
    so one cause is not reported once per call).
    """
    issues: list[Issue] = []
    if not messages:
        return [("messages", "conversation is empty")]
    pending: dict[str, str] = {}
    n_assistant = n_user = 0
    for i, (where, msg) in enumerate(messages):
        if not isinstance(msg, dict):
            issues.append((where, f"message must be an object, got {type(msg).__name__}"))
            continue
        role = msg.get("role")
        if role not in ROLES:
            issues.append((f"{where}.role", f"role {role!r} is not one of {list(ROLES)}"))
            continue
        content = msg.get("content")
        if content is not None and not isinstance(content, str):
            issues.append((f"{where}.content", f"must be a string or null, got {type(content).__name__}"))
            content = None
        calls = msg.get("tool_calls")
        has_calls = calls not in (None, [])
        if role == "system" and i != 0:
            issues.append((f"{where}.role", "a system message may only come first"))
        if role != "tool" and pending:
            ids = ", ".join(repr(k) for k in pending)
            issues.append((f"{where}", f"tool call(s) {ids} got no tool response before this {role} message"))
            pending.clear()
        if has_calls and role != "assistant":
            issues.append((f"{where}.tool_calls", f"only assistant messages may carry tool calls, not {role}"))
        if role == "assistant":
            n_assistant += 1
            if has_calls:
                issues.extend(_check_tool_calls(where, calls, tool_names, pending))
            if not has_calls and not (content and content.strip()):
                issues.append((f"{where}.content", "assistant message has neither content nor tool calls"))
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                issues.append((f"{where}.tool_call_id", "tool message without a tool_call_id"))
            elif call_id not in pending:
                issues.append((f"{where}.tool_call_id", f"answers {call_id!r}, which is not a pending call id"))
            else:
                pending.pop(call_id)
            if content is None:
                issues.append((f"{where}.content", "tool message has no content"))
        else:
            if role == "user":
                n_user += 1
            if not (content and content.strip()):
                issues.append((f"{where}.content", f"{role} message has no content"))
    if n_user == 0:
        issues.append(("messages", "no user message"))
    if n_assistant == 0:
        issues.append(("messages", "no assistant message"))
    return issues


def find_banned_keys(value: Any, field: str) -> list[Issue]:
    """Every banned key anywhere inside value (dicts and lists, recursively)."""
    issues: list[Issue] = []
    stack: list[tuple[str, Any]] = [(field, value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                child_where = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and key.lower() in BANNED_KEYS:
                    issues.append((child_where, f"banned key {key!r}: oracle/gold data must not reach training rows"))
                if key == "arguments" and isinstance(child, str):  # OpenAI tool-call arguments are JSON text
                    child, _ = parse_arguments(child)
                stack.append((child_where, child))
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(node))
    return sorted(issues)
