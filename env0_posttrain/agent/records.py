"""What one episode leaves behind: the conversation, every model exchange, the verdict.

Messages are OpenAI chat dicts exactly as sent to / received from the model:
  {"role": "assistant", "content": str | None,
   "tool_calls": [{"id": str, "type": "function", "function": {"name": str, "arguments": str(JSON)}}]}
  {"role": "tool", "tool_call_id": str, "name": str, "content": str}
An exchange stores the length of the message prefix it was sent (the request is
`messages[:request_len]` with the episode's `tools`), so a 10-step episode does not store
its conversation ten times.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.tasks.model import VerifierResult
from env0_posttrain.tasks.reward import is_unscored, optimiser_reward

Arm = Literal["teacher", "base", "sft", "teacher_eval", "rl", "onpolicy"]
# environment_error: the harness failed around the agent (its set-up, or a bug between its steps): no verdict
StopCondition = Literal["agent_completed", "max_steps", "stuck", "agent_error", "infra_error", "verifier_error",
                        "environment_error"]


class TokenUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = Field(default=0, description="of prompt_tokens, served from a prefix cache, not prefilled")
    cost_usd: float | None = None

    def __add__(self, other: "TokenUsage") -> "TokenUsage":
        cost = None if self.cost_usd is None and other.cost_usd is None else (self.cost_usd or 0) + (other.cost_usd or 0)
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cost_usd=cost,
        )


class Exchange(BaseModel):
    """One model call."""

    model_config = ConfigDict(extra="forbid")

    index: int
    request_len: int = Field(description="the request was messages[:request_len]")
    response: dict[str, Any] | None = Field(description="the assistant message returned, None on failure")
    finish_reason: str | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)
    latency_s: float = 0.0
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    error: str | None = None
    error_kind: Literal["infra", "agent"] | None = None
    attempts: int = 1


class Episode(BaseModel):
    """One task x trial x arm; the unit the store writes as soon as it finishes."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    arm: Arm
    task_id: str
    trial: int = Field(ge=0)
    model: str
    agent: str = "env0-agent"
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(description="OpenAI function tool definitions offered")
    surface: Literal["tools", "shell", "both"] = Field(default="tools", description="what the agent acted through")
    steering_prompt: str | None = None
    final_answer: str | None = None
    stop_condition: StopCondition
    error: str | None = None
    verifier: VerifierResult | None = None
    exchanges: list[Exchange] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    started_at: float = 0.0
    duration_s: float = 0.0
    infra_errors: int = Field(default=0, description="infrastructure failures retried during the episode")
    agent_errors: int = Field(default=0, description="malformed calls, unknown tools")
    error_counts: dict[str, int] = Field(
        default_factory=dict, description="errors by kind (timeout, rate_limit, malformed_call, unknown_tool...)"
    )
    workspace_diff: dict[str, Any] | None = Field(
        default=None, description="what the episode changed: {service: {table: {added|updated|deleted: rows}}}, "
        "compacted (agent/state_diff.py); None where the environment cannot say (or the episode predates it)")

    @property
    def reward(self) -> float:
        """The verifier's reward; an unscored episode's is the task's minimum (tasks/reward.py), never a 0 that beats
        a tripped safety gate."""
        return optimiser_reward(self)

    @property
    def passed(self) -> bool:
        return not is_unscored(self) and self.verifier is not None and self.verifier.reward >= 1.0

    @property
    def n_tool_calls(self) -> int:
        return sum(len(m.get("tool_calls") or []) for m in self.messages if m.get("role") == "assistant")

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.run_id, self.arm, self.task_id, self.trial)
