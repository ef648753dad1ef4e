"""Fail fast: stop a rollout at the first sign that no retry can help, and say what to fix.

Some failures are the same on every call: a package litellm needs is missing, the key is refused,
the model id is unknown, the provider refuses the very first request of an episode (it holds only
the spec's prompt, tools and sampling), nothing listens at `api_base`. Retrying them with backoff
and refilling every episode only burns minutes and floods the log. The first four raise
FatalModelError at once (see `classify_exception` and `call_model`). A refused connection can be
a server still starting, so it is retried, but `FailFast` stops the rollout when the first
`episodes` episodes (fewer when fewer run at once) saw nothing but refused tries, `episodes x tries`
of them in all, and no call of the rollout ever succeeded. Counting tries in all, not `tries` per
episode, makes the stop independent of how the episodes' retries interleave (counted per episode, one
episode racing through its retries would delay it); once tripped, no episode starts another call.

One `FailFast` per rollout and process, shared by its episodes through a context variable (asyncio
tasks copy the context they are created in, so every episode task sees the same object).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from .llm import FatalModelError

FAIL_FAST_EPISODES = 3
FAIL_FAST_TRIES = 2
UNREACHABLE_KINDS = frozenset({"connection_refused", "unknown_host"})

# kind -> (what it means, the ModelEndpoint field to fix)
FATAL_KINDS: dict[str, tuple[str, str]] = {
    "missing_package": ("a Python package the model's provider needs is not installed: install it (litellm's "
                        "tool calls need `pip install 'litellm[mcp]'`) or pick another provider", "model"),
    "missing_key": ("the environment variable named by api_key_env is not set", "api_key_env"),
    "authentication": ("the provider refused the API key (missing, wrong or expired)", "api_key_env"),
    "permission": ("the API key is not allowed to use this model", "api_key_env"),
    "http_401": ("the provider refused the API key", "api_key_env"),
    "http_403": ("the API key is not allowed to use this model", "api_key_env"),
    "unknown_provider": ("litellm cannot route this model id: its provider prefix is unknown (a typo?)", "model"),
    "not_found": ("the provider does not know this model id (404)", "model"),
    "http_404": ("the provider does not know this model id (404)", "model"),
    "bad_request": ("the provider refused an episode's first request, which holds only the spec's prompt, "
                    "tools and sampling", "sampling"),
    "connection_refused": ("nothing accepts connections at the model's address", "api_base"),
    "unknown_host": ("the model's host name does not resolve", "api_base"),
}


def fix_for(kind: str) -> tuple[str, str]:
    """(cause, endpoint field) for a FatalModelError kind; unknown kinds point at the model id."""
    return FATAL_KINDS.get(kind, (f"the provider failed with {kind or 'an error'} that retrying cannot fix", "model"))


@dataclass
class FailFast:
    """Counts, per episode, tries that found nobody listening; trips when enough episodes saw only that."""

    episodes: int = FAIL_FAST_EPISODES
    tries: int = FAIL_FAST_TRIES
    healthy: bool = False
    tripped: bool = False
    kind: str = "connection_refused"  # what tripped it
    refused: Counter = field(default_factory=Counter)
    mixed: set = field(default_factory=set)

    def ok(self) -> None:
        self.healthy = True

    def other_error(self, episode: str) -> None:
        self.mixed.add(episode)

    def unreachable(self, episode: str, kind: str = "connection_refused") -> bool:
        """Record one refused try; True when the rollout must stop (and from then on, for every episode)."""
        if self.tripped:
            return True
        if self.episodes <= 0 or self.healthy:
            return False
        self.refused[episode] += 1
        only_refused = [n for e, n in self.refused.items() if e not in self.mixed]
        self.tripped = len(only_refused) >= self.episodes and sum(only_refused) >= self.episodes * self.tries
        self.kind = kind if self.tripped else self.kind
        return self.tripped


CURRENT: ContextVar[FailFast | None] = ContextVar("env0_fail_fast", default=None)


@contextlib.contextmanager
def fail_fast_scope(episodes: int, tries: int = FAIL_FAST_TRIES) -> Iterator[FailFast]:
    """Make a fresh FailFast current for the tasks created inside this block."""
    breaker = FailFast(episodes=episodes, tries=tries)
    token = CURRENT.set(breaker)
    try:
        yield breaker
    finally:
        CURRENT.reset(token)


def unreachable_error(model: str, kind: str, breaker: FailFast, message: str) -> FatalModelError:
    return FatalModelError(f"{model}: {kind}: every try of the first {breaker.episodes} episodes failed to connect "
                           f"({breaker.episodes * breaker.tries} tries, no call succeeded); last error: {message}",
                           kind, model)
