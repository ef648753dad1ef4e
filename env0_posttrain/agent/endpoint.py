"""Where a model lives and how the loop drives it: the two knobs objects of the harness.

A `ModelEndpoint` is any litellm model id plus sampling; the key is read from the environment
variable it names, never stored. `AgentSettings` are the loop's limits, the same for every arm so a
base-vs-adapter comparison differs only in the model.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.spec.runspec import EvalSpec, ScaleSpec, ShellSpec, Surface, TeacherSpec

DEFAULT_SYSTEM_PROMPT = (
    "You are an assistant working in a company's Google Workspace and Slack through the tools provided. "
    "Complete the user's request by calling tools, one step at a time, using ids and values returned by earlier "
    "calls. Do not invent data. When the request is done, reply with a short final answer and no tool call; "
    "if the request asks a question, the final answer must contain the answer."
)


class ModelEndpoint(BaseModel):
    """One model reachable through litellm: `openai/gpt-4o`, `hosted_vllm/Qwen/Qwen3.5-9B`, `env0-oracle/oracle`..."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1, description="litellm model id, provider prefix included")
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="name of the env var holding the key; never the key")
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1)
    extra: dict[str, Any] = Field(
        default_factory=dict,
        description="extra litellm kwargs, e.g. {'extra_body': {'return_token_ids': True}} for vLLM",
    )

    def completion_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ValueError(f"model {self.model}: environment variable {self.api_key_env} is not set")
            kwargs["api_key"] = key
        kwargs.update(self.extra)
        return kwargs

    @classmethod
    def from_teacher(cls, teacher: TeacherSpec, seed: int = 0) -> "ModelEndpoint":
        """The run spec's teacher; the oracle's skill and seed travel as provider options, also through
        `env0-faulty/` wrappers. A skill in the id (`env0-oracle/oracle@0.6`) overrides `teacher.skill`."""
        from .providers.oracle import skill_from_model_id

        extra: dict[str, Any] = {}
        inner = teacher.model
        while inner.startswith("env0-faulty/"):
            inner = inner.removeprefix("env0-faulty/")
        if inner.startswith("env0-oracle/"):
            named = skill_from_model_id(inner)
            extra = {"env0_skill": teacher.skill if named is None else named, "env0_seed": seed}
        model = teacher.model
        if teacher.fault_rate is not None:  # read by the env0-faulty provider (faulty.py), which wraps any model
            extra["env0_fault_rate"] = teacher.fault_rate
            model = model if model.startswith("env0-faulty/") else f"env0-faulty/{model}"
        s = teacher.sampling  # max_tokens is None only outside a RunSpec (which fills it from its budget)
        limit = {"max_tokens": s.max_tokens} if s.max_tokens is not None else {}
        return cls(model=model, api_base=teacher.api_base, api_key_env=teacher.api_key_env,
                   temperature=s.temperature, top_p=s.top_p, extra=extra, **limit)

    @classmethod
    def for_eval(cls, model: str, spec: EvalSpec, api_base: str | None = None,
                 api_key_env: str | None = None) -> "ModelEndpoint":
        """A base or adapter model sampled with the run's eval settings (the same for both)."""
        limit = {"max_tokens": spec.max_tokens} if spec.max_tokens is not None else {}
        return cls(model=model, api_base=api_base, api_key_env=api_key_env, temperature=spec.temperature, **limit)


def oracle_endpoint(skill: float = 1.0, seed: int = 0, latency_s: float = 0.0, name: str = "oracle") -> ModelEndpoint:
    """The offline teacher: plays each task's oracle solution, making mistakes at rate 1 - skill per step."""
    if not 0.0 <= skill <= 1.0:
        raise ValueError(f"oracle skill must be in [0, 1], got {skill}")
    return ModelEndpoint(model=f"env0-oracle/{name}",
                         extra={"env0_skill": skill, "env0_seed": seed, "env0_latency_s": latency_s})


class AgentSettings(BaseModel):
    """Limits of the loop and of the infrastructure retries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_steps: int = Field(default=12, ge=1, description="model calls per episode")
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    steering_prompt: str | None = Field(default=None, description="teacher arms only; appended to the system prompt")
    max_consecutive_agent_errors: int = Field(default=3, ge=1, description="malformed replies in a row that end it")
    stuck_after: int | None = Field(default=None, ge=2, description="the same tool calls with the same arguments "
                                    "this many turns in a row end the episode as `stuck` (agent/stuck.py); None = never")
    concurrency: int = Field(default=16, ge=1)
    processes: int = Field(default=1, ge=1, description="worker processes sharing the concurrency (one event loop "
                                                          "each; a few slots per loop keep the per-step delay "
                                                          "low, up to two processes per core); models a fresh "
                                                          "process cannot route run in this one")
    request_timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=5, ge=0, description="infra retries per model call")
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=20.0, ge=0)
    max_refills: int = Field(default=3, ge=0, description="re-runs of an episode that still ended on infra")
    tool_result_max_chars: int = Field(default=20000, ge=100, description="longer tool results are truncated")
    surface: Surface = Field(default="tools", description="API function tools, OpenHands' terminal + finish, or both")
    shell: ShellSpec = Field(default_factory=ShellSpec, description="per-command limits on the shell surface")
    scale: ScaleSpec = Field(default_factory=ScaleSpec, description="where the episodes run: worker processes of this "
                             "host, or Ray actors (`processes` of them, sharing the concurrency)")

    @classmethod
    def for_teacher(cls, teacher: TeacherSpec, max_steps: int = 30, **kw: Any) -> "AgentSettings":
        """The run spec's teacher section (the teacher and teacher_eval arms): concurrency and processes too."""
        kw = {"concurrency": teacher.concurrency, "processes": teacher.processes, "surface": teacher.surface, **kw}
        return cls(max_steps=max_steps, steering_prompt=teacher.steering_prompt, **kw)

    @classmethod
    def for_eval(cls, spec: EvalSpec, **kw: Any) -> "AgentSettings":
        """The run spec's eval section (base and sft arms). An env0-local student is served by a provider of this
        process, so its rollouts stay here whatever `processes` says (run_rollouts logs why)."""
        kw = {"concurrency": spec.concurrency, "processes": spec.processes, "surface": spec.surface,
              "stuck_after": spec.stuck_after, **kw}
        if spec.max_steps is not None:  # None only outside a RunSpec (which fills it from its budget)
            kw["max_steps"] = spec.max_steps
        return cls(**kw)
