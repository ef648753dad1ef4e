"""A rollout backend that exists only in the test tree: its settings and its player in one module, registered by one
entry-point line (test_registry.py), as a backend of the package is by its line in pyproject.toml."""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

from env0_posttrain.agent.attempts import attempt_episode
from env0_posttrain.agent.backends.base import Deliver, Job, RoundRun, ShardStats
from env0_posttrain.spec.section import Section


class InlineSettings(Section):
    """`scale.backend: {kind: inline, order: ...}`."""

    kind: Literal["inline"] = "inline"
    order: Literal["given", "reversed"] = "given"


class InlineRollouts:
    """Plays the round's jobs one after another on this event loop, in its settings' order, and says what it was given."""

    name: ClassVar[str] = "inline"
    settings: ClassVar[type[Section]] = InlineSettings

    def __init__(self) -> None:
        self.given: list[tuple[list[tuple[str, int]], RoundRun]] = []

    def leaves_process(self, settings: Any, jobs: int) -> bool:
        return jobs > 0

    async def play(self, todo: list[Job], run: RoundRun, deliver: Deliver) -> ShardStats:
        jobs = list(reversed(todo)) if run["settings"].scale.backend.order == "reversed" else list(todo)
        self.given.append(([(t.id, k) for t, k in jobs], run))
        t0 = time.process_time()
        for task, trial in jobs:
            outcome = await attempt_episode(task, trial, run["endpoint"], run["settings"], run["arm"], run["run_id"],
                                            run["env"])
            await deliver(task, trial, outcome)
        return ShardStats(processes=1, cpu_s=time.process_time() - t0)


INLINE = InlineRollouts()
