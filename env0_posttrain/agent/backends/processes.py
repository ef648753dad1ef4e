"""The default backend: this host's worker processes (the pool and its protocol are agent/workers.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from env0_posttrain.spec.section import Section

from .base import Deliver, Job, RoundRun, ShardStats

if TYPE_CHECKING:
    from ..endpoint import AgentSettings


class ProcessesSettings(Section):
    """`scale.backend: processes`: each arm's `processes` worker processes share its concurrency (agent/workers.py)."""

    kind: Literal["processes"] = "processes"


class ProcessesRollouts:
    """`processes` worker processes share the round's concurrency; one process or one slot stays here."""

    name: ClassVar[str] = "processes"
    settings: ClassVar[type[Section]] = ProcessesSettings

    def leaves_process(self, settings: AgentSettings, jobs: int) -> bool:
        return jobs > 1 and settings.concurrency > 1 and settings.processes > 1

    async def play(self, todo: list[Job], run: RoundRun, deliver: Deliver) -> ShardStats:
        from ..workers import run_sharded  # the pool module imports this package's contract: imported when played

        return await run_sharded(todo, run["settings"].processes, run, deliver)


PROCESSES = ProcessesRollouts()
