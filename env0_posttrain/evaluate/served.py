"""Guards before an eval against a served endpoint (`hosting.kind: openai_compatible`).

The TITO seed's worst days were spent evaluating the wrong thing: vLLM kept serving an old adapter
under a reused name (`/v1/models` would have shown it), a reasoning parser moved every `<tool_call>`
into `reasoning_content`, and an adapter whose output equalled the base's was evaluated anyway.
So, before any rollout: the served name must be listed, and on the adapter arm a probe on training
prompts must show the adapter differs from the base and emits tool calls the server parses.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.agent.endpoint import AgentSettings, ModelEndpoint
from env0_posttrain.agent.messages import assistant_message, parse_arguments, stray_tool_call, system_message
from env0_posttrain.spec.runspec import HostingSpec, RunSpec


REQUEST_TIMEOUT_S = 120.0


class ServedModelError(RuntimeError):
    """The served endpoint cannot be evaluated as the spec says; the message names the spec field."""


def _api_key(hosting: HostingSpec) -> str:
    if not hosting.api_key_env:
        return "EMPTY"  # vLLM started without --api-key accepts any key
    key = os.environ.get(hosting.api_key_env)
    if not key:
        raise ServedModelError(f"hosting.api_key_env: environment variable {hosting.api_key_env} is not set")
    return key


def served_model_ids(hosting: HostingSpec, timeout_s: float = 10.0) -> list[str]:
    """The ids `<hosting.api_base>/models` lists (vLLM lists the base and every loaded LoRA module)."""
    import openai

    client = openai.OpenAI(base_url=hosting.api_base, api_key=_api_key(hosting), timeout=timeout_s, max_retries=1)
    try:
        return [m.id for m in client.models.list()]
    except openai.AuthenticationError as err:
        raise ServedModelError(f"hosting.api_base {hosting.api_base}: /models refused the key "
                               f"(hosting.api_key_env {hosting.api_key_env!r}): {err}") from None
    except openai.OpenAIError as err:
        raise ServedModelError(f"hosting.api_base {hosting.api_base}: /models failed: {err}") from None


def require_listed(hosting: HostingSpec, name: str, field: str) -> list[str]:
    ids = served_model_ids(hosting)
    if name not in ids:
        hint = (" Load the adapter under this versioned name (vLLM: POST /v1/load_lora_adapter with lora_name "
                f"'{name}'); re-loading a new path under an old name silently keeps the old weights."
                if field == "hosting.adapter_name_prefix" else "")
        raise ServedModelError(f"hosting.api_base {hosting.api_base}: /models lists {ids}, not '{name}' "
                               f"(the name {field} gives).{hint}")
    return ids


class ServedProbe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: bool
    reason: str
    n_prompts: int
    n_outputs_differ: int
    adapter_parsed_calls: int = Field(description="adapter replies whose tool calls all parse")
    base_parsed_calls: int
    adapter_format_failures: dict[str, int] = Field(default_factory=dict, description="by kind")
    base_format_failures: dict[str, int] = Field(default_factory=dict)
    examples: list[dict[str, Any]] = Field(default_factory=list)


def _reply(endpoint: ModelEndpoint, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    from env0_posttrain.agent.llm import litellm

    response = litellm.completion(messages=messages, tools=tools or None, timeout=REQUEST_TIMEOUT_S,
                                  **endpoint.completion_kwargs())
    return assistant_message(response.choices[0].message, 0)


def _format(reply: dict[str, Any], offered: set[str]) -> str | None:
    """None when the reply's tool calls all parse; else the failure's kind."""
    stray = stray_tool_call(reply)
    if stray:
        return stray
    calls = reply.get("tool_calls") or []
    if not calls:
        return "no_tool_call"
    for call in calls:
        _, kind, _ = parse_arguments(call, offered)
        if kind:
            return kind
    return None


def served_probe(base: ModelEndpoint, adapter: ModelEndpoint,
                 prompts: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]) -> ServedProbe:
    """Greedy first replies of base and adapter on the same prompts, through the same server."""
    if not prompts:
        raise ValueError("served_probe: no prompts")
    differ, parsed = 0, {"base": 0, "adapter": 0}
    failures: dict[str, dict[str, int]] = {"base": {}, "adapter": {}}
    examples = []
    for messages, tools in prompts:
        offered = {t["function"]["name"] for t in tools}
        replies = {arm: _reply(ep, messages, tools) for arm, ep in (("base", base), ("adapter", adapter))}
        differ += replies["base"] != replies["adapter"]
        for arm, reply in replies.items():
            kind = _format(reply, offered)
            if kind is None:
                parsed[arm] += 1
            else:
                failures[arm][kind] = failures[arm].get(kind, 0) + 1
        if len(examples) < 3:
            examples.append(replies)
    n = len(prompts)
    problems = []
    if differ == 0:
        problems.append(f"the adapter's replies equal the base's on all {n} training prompts")
    if parsed["adapter"] == 0:
        problems.append(f"none of the adapter's {n} replies has a tool call that parses "
                        f"(format failures: {failures['adapter']})")
    stray = {k: v for k, v in failures["adapter"].items() if k.startswith("tool_call_in_")}
    if stray:
        problems.append(f"the server left tool calls unextracted in {stray}: check its tool-call and reasoning "
                        "parsers")
    reason = "; ".join(problems) or (f"adapter differs from the base on {differ}/{n} prompts; "
                                     f"{parsed['adapter']}/{n} of its replies carry tool calls that parse")
    return ServedProbe(passed=not problems, reason=reason, n_prompts=n, n_outputs_differ=differ,
                       adapter_parsed_calls=parsed["adapter"], base_parsed_calls=parsed["base"],
                       adapter_format_failures=failures["adapter"], base_format_failures=failures["base"],
                       examples=examples)


def first_prompts(spec: RunSpec, tasks: list, n: int) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The first request of `n` training tasks, exactly as the eval harness sends it."""
    from env0_posttrain.agent.environment import DEFAULT_ENV

    system = system_message(AgentSettings.for_eval(spec.eval).system_prompt, None)
    return [([system, {"role": "user", "content": t.instruction}], DEFAULT_ENV.openai_tools(t.tools))
            for t in sorted(tasks, key=lambda t: t.id)[:n]]


def guard_served_arm(spec: RunSpec, arm: str, endpoint: ModelEndpoint, train_tasks: list,
                     n_probe: int = 4) -> dict[str, Any]:
    """Raise ServedModelError unless the arm's model is served (and, for the adapter, the probe passes)."""
    hosting = spec.hosting
    name = endpoint.model.split("/", 1)[1]
    field = "hosting.adapter_name_prefix" if arm == "sft" else "hosting.base_model_name"
    ids = require_listed(hosting, name, field)
    out: dict[str, Any] = {"served_models": ids}
    if arm != "sft":
        return out
    base_name = hosting.base_model_name or spec.student.model
    require_listed(hosting, base_name, "hosting.base_model_name")
    base = endpoint.model_copy(update={"model": f"hosted_vllm/{base_name}"})
    probe = served_probe(base, endpoint, first_prompts(spec, train_tasks, n_probe))
    if not probe.passed:
        raise ServedModelError(f"served sanity probe on {hosting.api_base} ('{name}' vs '{base_name}'): {probe.reason}")
    return out | {"served_probe": probe.model_dump(mode="json", exclude={"examples"})}
