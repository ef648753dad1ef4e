"""The probe's verdict and what it reports, shared by the chat-row and the token-row probes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.train.generation import parse_tool_calls


class ProbeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: bool
    reason: str
    n_prompts: int
    n_outputs_differ: int
    base_loss: float
    adapter_loss: float
    base_first_call_match: int = Field(description="prompts whose first tool call the base got exactly right")
    adapter_first_call_match: int
    examples: list[dict[str, Any]] = Field(default_factory=list, description="a few (prompt, base, adapter) outputs")


def first_call_matches(tok, completions: list[str], expected: list[dict | None]) -> list[bool]:
    out = []
    for text, want in zip(completions, expected):
        calls = parse_tool_calls(tok, text)
        got = calls[0] if calls else None
        out.append(want is not None and got is not None and got["name"] == want["name"]
                   and got["arguments"] == want["arguments"])
    return out


def probe_verdict(tok, base_out: list[str], tuned_out: list[str], expected: list[dict | None], base_loss: float,
                  tuned_loss: float) -> ProbeResult:
    """Pass only if the adapter's outputs differ from the base's and its training loss is lower (chat or token rows)."""
    n = len(base_out)
    differ = sum(a != b for a, b in zip(base_out, tuned_out))
    problems = []
    if differ == 0:
        problems.append(f"adapter output identical to the base on all {n} training prompts")
    if not tuned_loss < base_loss:
        problems.append(f"adapter loss {tuned_loss:.4f} is not below the base's {base_loss:.4f} on training rows")
    reason = "; ".join(problems) or (
        f"adapter differs on {differ}/{n} prompts; training loss {base_loss:.3f} -> {tuned_loss:.3f}")
    return ProbeResult(
        passed=not problems, reason=reason, n_prompts=n, n_outputs_differ=differ, base_loss=base_loss,
        adapter_loss=tuned_loss, base_first_call_match=sum(first_call_matches(tok, base_out, expected)),
        adapter_first_call_match=sum(first_call_matches(tok, tuned_out, expected)),
        examples=[{"base": b, "adapter": a} for b, a in list(zip(base_out, tuned_out))[:3]],
    )
