"""Fault injection: `env0-faulty/<inner litellm model id>` wraps any model and breaks some calls.

Options (litellm kwargs): env0_fault_rate (0.2), env0_fault_kinds (all of FAULT_KINDS),
env0_fault_seed (0). Infra faults are raised as litellm's own exception types, so the harness sees
exactly what a flaky server produces; reply faults (malformed tool JSON, empty reply) corrupt the
inner model's real answer. Which call fails is a pure function of (seed, episode, request length,
refill, try of the request), all of which the harness passes in the call's metadata, so a run draws
the same faults in any process, resumed or not, and a retry or a refill can succeed. Calls from
outside the harness (no try in the metadata) count the tries of each request in this process.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections import Counter
from typing import Any

from ..llm import litellm, register_provider, response_cost
from .base import Env0Provider, fill_response

INFRA_FAULTS = ("timeout", "rate_limit", "server_error", "connection")
REPLY_FAULTS = ("malformed_json", "empty_reply")
FAULT_KINDS = INFRA_FAULTS + REPLY_FAULTS


def raise_infra_fault(kind: str, model: str) -> None:
    p = "env0-faulty"
    if kind == "timeout":
        raise litellm.Timeout(message="injected: request timed out", model=model, llm_provider=p)
    if kind == "rate_limit":
        raise litellm.RateLimitError(message="injected: 429 Too Many Requests", model=model, llm_provider=p)
    if kind == "server_error":
        raise litellm.ServiceUnavailableError(message="injected: 503 Service Unavailable", model=model, llm_provider=p)
    if kind == "connection":
        raise litellm.APIConnectionError(message="injected: connection reset by peer", model=model, llm_provider=p)
    raise ValueError(f"unknown infra fault {kind!r}")


def malformed(message: dict[str, Any], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The reply with its first tool call's JSON cut short (or a cut call where there was none)."""
    calls = [dict(c, function=dict(c["function"])) for c in message.get("tool_calls") or []]
    if calls:
        args = calls[0]["function"].get("arguments") or "{}"
        calls[0]["function"]["arguments"] = args[: max(1, len(args) - 2)]
    else:
        name = (tools or [{"function": {"name": "tool"}}])[0]["function"]["name"]
        calls = [{"id": "call_injected", "type": "function", "function": {"name": name, "arguments": '{"'}}]
    return {"role": "assistant", "content": message.get("content"), "tool_calls": calls}


class FaultyProvider(Env0Provider):
    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._sent: Counter = Counter()
        self.injected: Counter = Counter()

    def _draw(self, seed: int, meta: dict[str, Any], n_messages: int) -> random.Random:
        key = f"{seed}|{meta.get('run_id')}|{meta.get('arm')}|{meta.get('task_id')}|{meta.get('trial')}|{n_messages}"
        if "call_attempt" in meta:
            tries = f"{meta.get('refill', 0)}|{meta['call_attempt']}"
        else:
            with self._lock:
                self._sent[key] += 1
                tries = str(self._sent[key])
        return random.Random(hashlib.sha256(f"{key}|{tries}".encode()).digest())

    def _record(self, kind: str) -> None:
        with self._lock:
            self.injected[kind] += 1

    def add_injected(self, counts: dict[str, int]) -> None:
        """Faults injected elsewhere on this process's behalf (rollout worker processes)."""
        with self._lock:
            self.injected.update(counts)

    async def respond(self, model, messages, options, meta, model_response):
        rate = float(options.pop("env0_fault_rate", 0.2))
        kinds = tuple(options.pop("env0_fault_kinds", FAULT_KINDS))
        rng = self._draw(int(options.pop("env0_fault_seed", 0)), meta, len(messages))
        fault = rng.choice(kinds) if kinds and rng.random() < rate else None
        if fault in INFRA_FAULTS:
            self._record(fault)
            raise_infra_fault(fault, model)
        if fault == "empty_reply":
            self._record(fault)
            return fill_response(model_response, model, {"role": "assistant", "content": ""})
        extra = {"metadata": {"env0": meta}} if meta else {}
        inner = await litellm.acompletion(model=model, messages=messages, **options, **extra)
        msg = inner.choices[0].message
        message = {"role": "assistant", "content": msg.content,
                   "tool_calls": [c.model_dump() if hasattr(c, "model_dump") else c for c in (msg.tool_calls or [])]}
        if fault == "malformed_json":
            self._record(fault)
            message = malformed(message, options.get("tools"))
        hidden = {k: v for k, v in (inner._hidden_params or {}).items() if str(k).startswith("env0_")}
        hidden["env0_inner_cost"] = response_cost(inner)
        if hidden["env0_inner_cost"] is not None:  # litellm need not price the wrapper again
            hidden["response_cost"] = hidden["env0_inner_cost"]
        usage = inner.usage
        return fill_response(model_response, model, message, prompt_tokens=usage.prompt_tokens or 0,
                             completion_tokens=usage.completion_tokens or 0,
                             finish_reason=inner.choices[0].finish_reason if fault is None else None, hidden=hidden)


FAULTY = FaultyProvider()


def injected_faults() -> dict[str, int]:
    """How many faults of each kind the process's fault provider has injected."""
    return dict(FAULTY.injected)


def install_faulty() -> None:
    register_provider("env0-faulty", FAULTY)
