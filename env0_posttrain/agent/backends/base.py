"""What a rollout backend is: the one contract every place that plays a round's episodes answers.

A backend is given a round's (task, trial) jobs, what they run with (`RoundRun`: the values that travel to a worker
or an actor) and `deliver`; it plays each job somewhere else than the step's event loop and hands every outcome to
`deliver` in this process, once, which accounts it and stores it (agent/rollouts.py). It returns `ShardStats`. It
decides nothing about refills, fail-fast budgets or the store: those stay with the caller whichever backend plays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:  # a spec reads this package for the backends' settings: it stays free of the tasks' import
    from env0_posttrain.tasks.model import Task

    from ..endpoint import AgentSettings, ModelEndpoint
    from ..environment import TaskEnv

Job = tuple["Task", int]
# A job's outcome: every attempt's episode (refills included, last one final) and a crash message.
Outcome = tuple[list[Any], "str | None"]
Deliver = Callable[["Task", int, Outcome], Awaitable[None]]


class RoundRun(TypedDict):
    """What every job of a round runs with; it travels to the backend's workers as values (a key never does)."""

    endpoint: ModelEndpoint
    settings: AgentSettings
    arm: str
    run_id: str
    env: TaskEnv


@dataclass
class ShardStats:
    """What a backend reports back besides the outcomes."""

    processes: int  # workers (processes, actors) the jobs were spread over
    cpu_s: float = 0.0  # CPU seconds those workers spent
    faults: Counter = field(default_factory=Counter)  # faults the env0-faulty provider injected there
    resent: int = 0  # jobs sent again after the worker holding them died (each delivered once)


def split_concurrency(concurrency: int, processes: int) -> list[int]:
    """Slots per worker: `concurrency` spread as evenly as possible over `processes` (each gets one at least)."""
    n = max(1, min(processes, concurrency))
    return [concurrency // n + (i < concurrency % n) for i in range(n)]


@runtime_checkable
class RolloutBackend(Protocol):
    """One place episodes can run; `name` is its `scale.backend.kind` and the summary's `backend`."""

    name: ClassVar[str]

    def leaves_process(self, settings: AgentSettings, jobs: int) -> bool:
        """Whether `jobs` jobs under `settings` go to this backend's workers (False: they play in this process)."""
        ...

    async def play(self, todo: list[Job], run: RoundRun, deliver: Deliver) -> ShardStats:
        """Play every job of `todo`; `deliver` each outcome here, once; raise to fail the round."""
        ...
