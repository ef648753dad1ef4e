"""Batches that are the same on any machine: a rollout of the local student plays its episodes in lanes, and the
student runs a batch only when every lane still playing has its next request waiting.

The numbers a model computes for one prompt depend on the batch it is in (measured on the tiny student: the last
logits of a prompt alone and in a batch differ by up to 5e-6; the matrix kernels block differently for other
shapes), and which requests shared a batch depended on timing: a busy machine formed other batches than a quiet
one, and a greedy reply could turn at a near-tie. With lanes, lane j plays the j-th, (j+C)-th, ... episodes of the
rollout in turn, and the student's k-th batch of the rollout holds each live lane's next request, in lane order:
what a row is batched with no longer depends on timing, so neither do the replies. A lane moves to its next episode
as soon as the last model call of the one before is answered (`MODEL_DONE`); that episode's verifier runs beside
it, so a slow verifier holds no tick. The price left: a tick waits for the slowest lane's tool calls and for the
workspace of a lane's next episode to be built.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from ..llm import provider_of

LANE: ContextVar[tuple["Lanes", int] | None] = ContextVar("env0_lane", default=None)
# Called by an episode when its last model call is done (its verifier may still run): the lane moves on then.
MODEL_DONE: ContextVar[Callable[[], None] | None] = ContextVar("env0_model_done", default=None)
LOCKSTEP_PROVIDERS = frozenset({"env0-local"})  # providers that batch concurrent requests in this process


def wants_lanes(model: str) -> bool:
    return provider_of(model) in LOCKSTEP_PROVIDERS


class Lanes:
    """The lanes of one rollout: which are still playing; listeners hear when one ends."""

    def __init__(self, n: int):
        self.live: set[int] = set(range(n))
        self._listeners: list[Callable[[], None]] = []

    def finish(self, lane: int) -> None:
        self.live.discard(lane)
        for wake in list(self._listeners):
            wake()

    def listen(self, wake: Callable[[], None]) -> None:
        if wake not in self._listeners:
            self._listeners.append(wake)
