"""One model call through litellm, with infra retries, captured as an Exchange.

Infra failures are retried by tenacity with exponential backoff and full jitter (AWS's recipe), so
64 episodes hitting one 429 do not come back in lockstep; fatal kinds and agent errors are not
retried (agent/fail_fast.py). Custom providers ignore litellm's `timeout`, so the deadline is
enforced here for every model alike.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from .endpoint import AgentSettings
from .fail_fast import CURRENT as FAIL_FAST
from .fail_fast import UNREACHABLE_KINDS, unreachable_error
from .llm import FatalModelError, classify_exception, litellm, response_cost
from .records import Exchange, TokenUsage


@dataclass
class CallOutcome:
    exchange: Exchange
    response: Any | None
    error_class: str | None = None  # None (ok), "infra" (retries exhausted) or "agent"
    error_counts: Counter = field(default_factory=Counter)
    infra_failures: int = 0


class _RetryableFailure(Exception):
    """An infra failure tenacity may retry; carries the exchange to record if the retries run out."""

    def __init__(self, exchange: Exchange, error_class: str):
        super().__init__(exchange.error)
        self.exchange, self.error_class = exchange, error_class


def retrying(settings: AgentSettings) -> AsyncRetrying:
    """Up to `max_retries` more tries of an infra failure, waiting a full-jitter exponential backoff
    (uniform in [0, min(backoff_max_s, backoff_base_s * 2**(try-1))]) between them."""
    return AsyncRetrying(stop=stop_after_attempt(settings.max_retries + 1),
                         wait=wait_random_exponential(multiplier=settings.backoff_base_s, max=settings.backoff_max_s),
                         retry=retry_if_exception_type(_RetryableFailure), reraise=True)


def _token_ids(response: Any) -> tuple[list[int] | None, list[int] | None]:
    """Token ids where the server gave them: env0's local student, vLLM's `return_token_ids`, Fireworks."""
    hidden = getattr(response, "_hidden_params", None) or {}
    hidden = hidden if isinstance(hidden, dict) else {}
    prompt = hidden.get("env0_prompt_token_ids", hidden.get("fireworks_prompt_token_ids"))
    completion = hidden.get("env0_completion_token_ids")
    if completion is None and hidden.get("fireworks_token_ids"):
        completion = hidden["fireworks_token_ids"][0]
    if prompt is None:
        prompt = getattr(response, "prompt_token_ids", None)
    if completion is None and response.choices:
        choice = response.choices[0]
        completion = getattr(choice, "token_ids", None)
        if completion is None:
            psf = getattr(choice, "provider_specific_fields", None) or {}
            completion = psf.get("token_ids") if isinstance(psf, dict) else None
    return (list(prompt) if prompt is not None else None, list(completion) if completion is not None else None)


def _usage(response: Any) -> TokenUsage:
    u = getattr(response, "usage", None)
    details = getattr(u, "prompt_tokens_details", None)
    return TokenUsage(prompt_tokens=int(getattr(u, "prompt_tokens", 0) or 0),
                      completion_tokens=int(getattr(u, "completion_tokens", 0) or 0),
                      cached_tokens=int(getattr(details, "cached_tokens", 0) or 0),
                      cost_usd=response_cost(response))


async def call_model(kwargs: dict[str, Any], messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                     settings: AgentSettings, index: int, episode: str = "") -> CallOutcome:
    """One request with its infra retries (tenacity). Raises FatalModelError for what no retry fixes: a fatal
    kind, a bad request on an episode's first call (nothing the model wrote is in it), or, through the rollout's
    FailFast, a model nobody answers for. `episode` names the episode for FailFast."""
    counts: Counter = Counter()
    breaker = FAIL_FAST.get()
    infra = 0
    env0_meta = (kwargs.get("metadata") or {}).get("env0")

    async def attempt(number: int) -> CallOutcome:
        nonlocal infra
        if breaker is not None and breaker.tripped:  # another episode proved nobody listens: no new call
            model = str(kwargs.get("model", ""))
            raise unreachable_error(model, breaker.kind, breaker, "stopped before calling")
        t0 = time.perf_counter()
        call = kwargs
        if env0_meta is not None:  # env0 providers see which try of this request it is
            call = {**kwargs, "metadata": {**kwargs["metadata"], "env0": {**env0_meta, "call_attempt": number}}}
        try:
            async with asyncio.timeout(settings.request_timeout_s):  # no extra task per call, unlike wait_for
                response = await litellm.acompletion(messages=list(messages), tools=tools or None, **call)
            if not getattr(response, "choices", None):
                raise litellm.APIError(status_code=502, message="reply has no choices",
                                       llm_provider="", model=kwargs.get("model", ""))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified, none is swallowed
            latency = time.perf_counter() - t0
            cls, kind = classify_exception(exc)
            model = str(kwargs.get("model", ""))
            if cls == "fatal" or (kind == "bad_request" and index == 0):
                raise FatalModelError(f"{model}: {kind}: {type(exc).__name__}: {str(exc)[:500]}", kind, model) from exc
            counts[kind] += 1
            infra += cls == "infra"
            message = f"{kind}: {type(exc).__name__}: {str(exc)[:500]}"
            if breaker is not None:
                if kind not in UNREACHABLE_KINDS:
                    breaker.other_error(episode)
                elif breaker.unreachable(episode, kind):
                    raise unreachable_error(model, kind, breaker, message) from exc
            exchange = Exchange(index=index, request_len=len(messages), response=None, latency_s=latency,
                                error=message, error_kind=cls, attempts=number)  # type: ignore[arg-type]
            if cls == "infra":
                raise _RetryableFailure(exchange, cls) from exc
            return CallOutcome(exchange, None, cls, counts, infra)
        latency = time.perf_counter() - t0
        if breaker is not None:
            breaker.ok()
        prompt_ids, completion_ids = _token_ids(response)
        choice = response.choices[0]
        exchange = Exchange(index=index, request_len=len(messages), response=None,
                            finish_reason=getattr(choice, "finish_reason", None), usage=_usage(response),
                            latency_s=latency, prompt_token_ids=prompt_ids, completion_token_ids=completion_ids,
                            attempts=number)
        return CallOutcome(exchange, response, None, counts, infra)

    try:
        async for try_ in retrying(settings):
            with try_:
                outcome = await attempt(try_.retry_state.attempt_number)
        return outcome
    except _RetryableFailure as failure:  # retries exhausted
        return CallOutcome(failure.exchange, None, failure.error_class, counts, infra)
