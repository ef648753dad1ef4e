"""The conversation's shapes: the assistant message as stored, tool calls checked, tool results as JSON.

A malformed call (arguments that are not a JSON object, a tool never offered) is the model's
mistake: it becomes a tool message carrying an error, exactly like an API error, so the model can
recover and the trajectory shows what happened.
"""

from __future__ import annotations

import json
from typing import Any

from env0_posttrain.workspace.request_limits import structure_problem

AgentErrorKind = str  # "malformed_call" | "unknown_tool" | "empty_reply" | "bad_request" | "context_window"

EMPTY_REPLY_NUDGE = "Your reply was empty. Call one of the tools, or give your final answer."
STRAY_CALL_NUDGE = ("Your reply wrote a <tool_call> as text, which was not run. Call the tool through the "
                    "tool-calling interface, or give your final answer.")
# A tool call the server's parser did not extract: in the text (no tool parser, or a format it does not
# read) or swallowed by a reasoning parser (the TITO seed's serve: the whole reply went to reasoning).
STRAY_CALL_KINDS = ("tool_call_in_content", "tool_call_in_reasoning")
FORMAT_FAILURE_KINDS = ("malformed_call", "unknown_tool", "empty_reply", *STRAY_CALL_KINDS)
_CALL_MARKERS = ("<tool_call>", "<function=")


def system_message(system_prompt: str, steering_prompt: str | None) -> dict[str, Any]:
    content = system_prompt if not steering_prompt else f"{system_prompt}\n\n{steering_prompt}"
    return {"role": "system", "content": content}


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def clean_text(text: str) -> str:
    """`text` as valid UTF-8: a lone surrogate (JSON allows the escape "\\ud800") becomes '?'. Left in, it
    makes the episode impossible to serialise, so the store could not write it and the rollout would stop."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def assistant_message(message: Any, step: int) -> dict[str, Any]:
    """The OpenAI assistant dict from a litellm Message (or dict); every tool call gets a unique id."""
    content = _get(message, "content")
    out: dict[str, Any] = {"role": "assistant", "content": clean_text(content) if isinstance(content, str) else None}
    reasoning = _get(message, "reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        out["reasoning_content"] = clean_text(reasoning)
    calls = []
    for i, call in enumerate(_get(message, "tool_calls") or []):
        fn = _get(call, "function") or {}
        args = _get(fn, "arguments")
        if isinstance(args, dict):
            args = json.dumps(args, ensure_ascii=False)
        calls.append({
            "id": clean_text(str(_get(call, "id") or f"call_{step}_{i}")),
            "type": "function",
            "function": {"name": clean_text(str(_get(fn, "name") or "")),
                         "arguments": clean_text(args) if isinstance(args, str) else ""},
        })
    if calls:
        out["tool_calls"] = calls
    return out


def stray_tool_call(message: dict[str, Any]) -> AgentErrorKind | None:
    """The kind of a reply with no parsed tool call whose content or reasoning still holds one, else None."""
    if message.get("tool_calls"):
        return None
    for field, kind in (("content", "tool_call_in_content"), ("reasoning_content", "tool_call_in_reasoning")):
        text = message.get(field) or ""
        if any(marker in text for marker in _CALL_MARKERS):
            return kind
    return None


def is_empty(message: dict[str, Any]) -> bool:
    return not message.get("tool_calls") and not (message.get("content") or "").strip()


def parse_arguments(call: dict[str, Any], offered: set[str]) -> tuple[dict[str, Any] | None, AgentErrorKind | None, str]:
    """(arguments, None, "") for a well-formed call of an offered tool, else (None, kind, message)."""
    name = call["function"]["name"]
    if name not in offered:
        return None, "unknown_tool", f"Unknown tool '{name}'. Available tools: {', '.join(sorted(offered))}."
    raw = call["function"]["arguments"]
    if raw is None or raw.strip() == "":
        return {}, None, ""
    if (too_much := structure_problem(raw)) is not None:  # counted in the text: the huge object is never built
        return None, "malformed_call", f"Arguments of '{name}' hold too much to parse ({too_much})."
    try:
        args = json.loads(raw)
        if "\\ud" in raw.lower():  # an escaped lone surrogate decodes to a str UTF-8 cannot hold
            args = json.loads(clean_text(json.dumps(args, ensure_ascii=False)))
    except json.JSONDecodeError as err:
        return None, "malformed_call", f"Arguments of '{name}' are not valid JSON ({err.msg} at char {err.pos})."
    except RecursionError:
        return None, "malformed_call", f"Arguments of '{name}' are nested too deeply to parse."
    if not isinstance(args, dict):
        return None, "malformed_call", f"Arguments of '{name}' must be a JSON object, got {type(args).__name__}."
    return args, None, ""


def agent_error_payload(kind: AgentErrorKind, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": 400, "status": "INVALID_ARGUMENT", "reason": kind, "message": message}}


def tool_message(call: dict[str, Any], payload: Any, max_chars: int) -> dict[str, Any]:
    """A text payload (the shell surface's terminal output) is the content as it is; anything else is JSON."""
    content = clean_text(payload) if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, default=str)
    if len(content) > max_chars:
        content = content[:max_chars] + f"... [truncated {len(content) - max_chars} chars]"
    return {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": content}


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as chat templates want them: tool-call arguments as dicts (Qwen3.5 iterates them).

    Arguments that are not a JSON object render as {}: the model sees that its call carried nothing usable.
    """
    out = []
    for m in messages:
        calls = m.get("tool_calls")
        if not calls:
            out.append(m)
            continue
        fixed = []
        for c in calls:
            args = c["function"].get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except (json.JSONDecodeError, RecursionError):
                    args = {}
            if not isinstance(args, dict):
                args = {}
            fixed.append({**c, "function": {**c["function"], "arguments": args}})
        out.append({**m, "tool_calls": fixed})
    return out

