"""Shared plumbing of env0's litellm custom providers: read the call's options, fill the response."""

from __future__ import annotations

import time
from typing import Any

from ..llm import litellm  # first: it points litellm at its packaged price map before litellm is imported

from litellm.types.utils import Message, ModelResponse, Usage  # noqa: E402, I001


def env0_metadata(litellm_params: dict[str, Any] | None) -> dict[str, Any]:
    meta = (litellm_params or {}).get("metadata") or {}
    return meta.get("env0", {}) if isinstance(meta, dict) else {}


def first_user_text(messages: list[dict[str, Any]]) -> str | None:
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return m["content"]
    return None


def fill_response(model_response: ModelResponse, model: str, message: dict[str, Any], *,
                  prompt_tokens: int = 0, completion_tokens: int = 0, cached_tokens: int = 0,
                  finish_reason: str | None = None, hidden: dict[str, Any] | None = None) -> ModelResponse:
    """Put an OpenAI assistant dict into litellm's response object (`cached_tokens`: of the prompt, reused
    rather than prefilled, as OpenAI's `usage.prompt_tokens_details` says it)."""
    tool_calls = message.get("tool_calls") or None
    model_response.choices[0].message = Message(content=message.get("content"), tool_calls=tool_calls,
                                                reasoning_content=message.get("reasoning_content"))
    model_response.choices[0].finish_reason = finish_reason or ("tool_calls" if tool_calls else "stop")
    model_response.usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                 total_tokens=prompt_tokens + completion_tokens,
                                 prompt_tokens_details={"cached_tokens": cached_tokens} if cached_tokens else None)
    model_response.model = model
    model_response.created = int(time.time())
    if hidden:
        model_response._hidden_params.update(hidden)
    return model_response


def set_known_cost(response: ModelResponse, cost: float | None) -> None:
    """Tell litellm the reply's price (unless it already carries one); None changes nothing."""
    hidden = getattr(response, "_hidden_params", None)
    if cost is not None and isinstance(hidden, dict) and hidden.get("response_cost") is None:
        hidden["response_cost"] = float(cost)


class Env0Provider(litellm.CustomLLM):
    """Base for providers that answer in-process; subclasses implement `respond`.

    `call_cost` is what one call costs when the provider knows it (the offline models: nothing). It is
    put in the reply's `_hidden_params["response_cost"]`, where litellm looks before pricing a reply
    itself: that skips litellm's per-call cost lookup (twice per call, about a fifth of its CPU) for
    models whose price is known to be zero. None (the default) leaves the pricing to litellm.
    """

    call_cost: float | None = None

    async def respond(self, model: str, messages: list[dict[str, Any]], options: dict[str, Any],
                      meta: dict[str, Any], model_response: ModelResponse) -> ModelResponse:
        raise NotImplementedError

    async def acompletion(self, model: str, messages: list, model_response: ModelResponse, optional_params: dict,
                          litellm_params: dict | None = None, **kwargs: Any) -> ModelResponse:
        response = await self.respond(model, messages, dict(optional_params or {}), env0_metadata(litellm_params),
                                      model_response)
        if self.call_cost is not None:
            set_known_cost(response, self.call_cost)
        return response
