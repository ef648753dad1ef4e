"""The one door to litellm: import it offline-safe, register env0's custom providers, classify failures.

Why classification lives here: the harness retries infrastructure failures (they say nothing about
the model) and feeds agent failures back to the model (they are part of its behaviour). Mixing the
two either throws away good trajectories or hides a model's mistakes.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import warnings
from typing import Any, Literal

# litellm fetches a price map from GitHub at import unless told to use its packaged copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
warnings.filterwarnings("ignore", message=".*Pydantic serializer warnings.*")

import litellm  # noqa: E402

litellm.suppress_debug_info = True
litellm.disable_end_user_cost_tracking = True  # a proxy feature (per end-user spend); per-call cost is unaffected

ENV0_PROVIDERS = ("env0-oracle", "env0-local", "env0-faulty")
_REGISTER_LOCK = threading.Lock()

ErrorClass = Literal["infra", "agent", "fatal"]


class FatalModelError(RuntimeError):
    """A failure no retry can fix (bad key, unknown model): stop the whole rollout, loudly.

    `kind` says which (see `FATAL_KINDS` in fail_fast.py), so the caller can name the setting to fix.
    """

    def __init__(self, message: str, kind: str = "", model: str = "") -> None:
        super().__init__(message)
        self.kind, self.model = kind, model

    def __reduce__(self) -> tuple:  # keeps kind and model across a worker process's pipe
        return (type(self), (str(self), self.kind, self.model))


def register_provider(provider: str, handler: litellm.CustomLLM) -> None:
    """Add (or replace) a custom provider; litellm routes `<provider>/<anything>` to `handler`."""
    with _REGISTER_LOCK:
        entries = [e for e in litellm.custom_provider_map if e["provider"] != provider]
        entries.append({"provider": provider, "custom_handler": handler})
        litellm.custom_provider_map = entries
        # litellm adds providers lazily on the first call; do it now so the first call is not special.
        from litellm.utils import custom_llm_setup

        custom_llm_setup()


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


def is_env0_model(model: str) -> bool:
    return provider_of(model) in ENV0_PROVIDERS


def is_offline_model(model: str) -> bool:
    """Served in-process at no cost (a faulty wrapper costs what its inner model costs)."""
    return provider_of(model) in ("env0-oracle", "env0-local")


_INFRA_TYPES: tuple[tuple[type[BaseException], str], ...] = (
    (litellm.Timeout, "timeout"),
    (asyncio.TimeoutError, "timeout"),
    (TimeoutError, "timeout"),
    (litellm.RateLimitError, "rate_limit"),
    (litellm.ServiceUnavailableError, "server_error"),
    (litellm.BadGatewayError, "server_error"),
    (litellm.InternalServerError, "server_error"),
    (litellm.APIConnectionError, "connection"),
    (ConnectionError, "connection"),
)
_AGENT_TYPES: tuple[tuple[type[BaseException], str], ...] = (
    (litellm.ContextWindowExceededError, "context_window"),
    (litellm.BadRequestError, "bad_request"),
    (litellm.UnprocessableEntityError, "bad_request"),
)
_FATAL_TYPES: tuple[tuple[type[BaseException], str], ...] = (
    (litellm.AuthenticationError, "authentication"),
    (litellm.PermissionDeniedError, "permission"),
    (litellm.NotFoundError, "not_found"),
)


def exception_chain(exc: BaseException, limit: int = 12) -> list[BaseException]:
    """`exc` and the exceptions it was raised from: litellm wraps the real cause (an ImportError, a
    refused socket) in its own APIConnectionError or InternalServerError."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(chain) < limit and cur not in chain:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    return chain


def classify_exception(exc: BaseException) -> tuple[ErrorClass, str]:
    """(class, kind): infra is retried, agent ends the episode scored, fatal aborts the rollout."""
    if "Missing credentials" in str(exc) or "api_key client option must be set" in str(exc):
        return "fatal", "authentication"  # litellm reports a missing key as a 500; no retry can fix it
    if "LLM Provider NOT provided" in str(exc):
        return "fatal", "unknown_provider"  # a BadRequestError, but about the model id, not the request
    chain = exception_chain(exc)
    if any(isinstance(e, ImportError) for e in chain):
        return "fatal", "missing_package"  # e.g. litellm without its `mcp` extra: every call fails alike
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "connection refused" in str(exc).lower():
        return "infra", "connection_refused"  # retried, but fail_fast stops a rollout that never connects
    if any(isinstance(e, socket.gaierror) for e in chain):
        return "infra", "unknown_host"
    for table, cls in ((_FATAL_TYPES, "fatal"), (_AGENT_TYPES, "agent"), (_INFRA_TYPES, "infra")):
        for exc_type, kind in table:
            if isinstance(exc, exc_type):
                return cls, kind  # type: ignore[return-value]
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status == 429:
            return "infra", "rate_limit"
        if status >= 500 or status == 408:
            return "infra", "server_error"
        if status in (401, 403, 404):
            return "fatal", f"http_{status}"
        return "agent", f"http_{status}"
    return "infra", type(exc).__name__


def response_cost(response: Any) -> float | None:
    """litellm's own price for the call, None when it does not know the model's price."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if not isinstance(hidden, dict):
        hidden = {"response_cost": getattr(hidden, "response_cost", None)}
    cost = hidden["env0_inner_cost"] if "env0_inner_cost" in hidden else hidden.get("response_cost")
    return float(cost) if isinstance(cost, (int, float)) else None


def register_free_model(model: str) -> None:
    """Offline models cost nothing; telling litellm so makes the cost 0.0 instead of unknown."""
    if model not in litellm.model_cost:
        litellm.register_model(
            {model: {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "cache_creation_input_token_cost": 0.0,
                     "cache_read_input_token_cost": 0.0, "litellm_provider": provider_of(model), "mode": "chat"}}
        )
