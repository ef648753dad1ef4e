"""Shared plumbing of env0's litellm custom providers: read the call's options, fill the response."""

from __future__ import annotations

import time
from typing import Any

from litellm.types.utils import Message, ModelResponse, Usage

from .llm import litellm


def env0_metadata(litellm_params: dict[str, Any] | None) -> dict[str, Any]:
    meta = (litellm_params or {}).get("metadata") or {}
    return meta.get("env0", {}) if isinstance(meta, dict) else {}


def first_user_text(messages: list[dict[str, Any]]) -> str | None:
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return m["content"]
    return None


def fill_response(model_response: ModelResponse, model: str, message: dict[str, Any], *,
                  prompt_tokens: int = 0, completion_tokens: int = 0, finish_reason: str | None = None,
                  hidden: dict[str, Any] | None = None) -> ModelResponse:
    """Put an OpenAI assistant dict into litellm's response object."""
    tool_calls = message.get("tool_calls") or None
    model_response.choices[0].message = Message(content=message.get("content"), tool_calls=tool_calls,
                                                reasoning_content=message.get("reasoning_content"))
    model_response.choices[0].finish_reason = finish_reason or ("tool_calls" if tool_calls else "stop")
    model_response.usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                 total_tokens=prompt_tokens + completion_tokens)
    model_response.model = model
    model_response.created = int(time.time())
    if hidden:
        model_response._hidden_params.update(hidden)
    return model_response


class Env0Provider(litellm.CustomLLM):
    """Base for providers that answer in-process; subclasses implement `respond`."""

    async def respond(self, model: str, messages: list[dict[str, Any]], options: dict[str, Any],
                      meta: dict[str, Any], model_response: ModelResponse) -> ModelResponse:
        raise NotImplementedError

    async def acompletion(self, model: str, messages: list, model_response: ModelResponse, optional_params: dict,
                          litellm_params: dict | None = None, **kwargs: Any) -> ModelResponse:
        return await self.respond(model, messages, dict(optional_params or {}), env0_metadata(litellm_params),
                                  model_response)
