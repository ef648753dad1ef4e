"""CPU seconds of a step: this process's and its finished children's (user + system), so that a stage's cost can be
read apart from the machine's load, which stretches wall time but not the work done (bench/demo_stages.py)."""

from __future__ import annotations

import os
import resource


def cpu_seconds() -> float:
    """User + system seconds so far of this process and of the children it has waited for (a Pipes worker, the
    rollout worker processes)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def step_usage(cpu_at_start: float) -> dict[str, float]:
    """The metadata a step records at its end: its CPU seconds and the machine's 1-minute load average then."""
    return {"cpu_seconds": round(cpu_seconds() - cpu_at_start, 1), "load_average": round(os.getloadavg()[0], 2)}
