"""How many threads torch uses: as many as there are cores free now, not as many as the machine has.

torch's default is one thread per core it may run on. Beside other busy processes its threads then wait for
each other at every parallel region (OpenMP spins, then sleeps) and a step slows far beyond the CPU share it
lost: 30 LoRA steps took 3.7x their quiet time beside two busy processes on 2 cores, where a fair share is 2x
(../shared/FIELD-NOTES.md, "torch threads under load"). One thread is no answer either: it halves the quiet
speed. So each process that trains or runs a model (the CLI, the Pipes worker, a rollout worker) chooses at the
start of each stage from the cores it may use (`os.sched_getaffinity`) and how busy they are right now (the
idle time of those cores over a short sample of /proc/stat; the 1-minute load average where that is missing).
`ENV0_TORCH_THREADS=N` overrides the choice.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

log = logging.getLogger("env0_posttrain.train")
ENV = "ENV0_TORCH_THREADS"
SAMPLE_S = 0.3


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    cores: int
    free: float  # cores' worth of idle time now
    source: str  # what `free` came from

    def __str__(self) -> str:
        return f"torch threads: {self.threads} of {self.cores} cores ({self.free:.1f} free, {self.source})"


def _idle_jiffies(cpus: set[int]) -> tuple[int, int] | None:
    """(idle, total) jiffies summed over `cpus`, from /proc/stat; None where there is no /proc/stat."""
    try:
        lines = open("/proc/stat").read().splitlines()
    except OSError:
        return None
    idle = total = 0
    for line in lines:
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            values = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
            idle += values[3] + values[4]
            total += sum(values)
    return (idle, total) if total else None


def free_cores(cpus: set[int], sample_s: float = SAMPLE_S) -> tuple[float, str]:
    """Cores' worth of idle time over the last `sample_s` seconds among `cpus` (the caller is not yet busy)."""
    first = _idle_jiffies(cpus)
    if first is not None:
        time.sleep(sample_s)
        second = _idle_jiffies(cpus)
        if second is not None and second[1] > first[1]:
            idle = (second[0] - first[0]) / (second[1] - first[1])
            return idle * len(cpus), f"idle over {sample_s:.1f} s"
    load = os.getloadavg()[0]
    return max(0.0, len(cpus) - load), f"1-min load {load:.1f}"


def choose_threads(cores: int, free: float) -> int:
    """The free cores, rounded, at least one and at most the cores this process may use."""
    return max(1, min(cores, int(free + 0.5)))


def use_free_cores(torch_module=None) -> ThreadChoice:
    """Set torch's intra-op threads for this process from the cores free now; log and return the choice."""
    if torch_module is None:
        import torch as torch_module
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    forced = os.environ.get(ENV, "").strip()
    if forced:
        if not forced.isdigit() or int(forced) < 1:
            raise ValueError(f"{ENV}={forced!r}: expected a positive number of threads")
        choice = ThreadChoice(int(forced), len(cpus), float(len(cpus)), ENV)
    else:
        free, source = free_cores(set(cpus))
        choice = ThreadChoice(choose_threads(len(cpus), free), len(cpus), free, source)
    torch_module.set_num_threads(choice.threads)
    log.info("%s", choice)
    return choice
