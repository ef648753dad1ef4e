"""How many threads torch uses: a number fixed for the run, so that its results do not depend on the machine's load.

torch splits a reduction among its threads, and the split sets the order in which floating-point sums are added
(the float32 sum of the tiny student's embedding matrix differs at 1 and at 2 threads). For the tiny student's own
shapes the forward pass, training steps and trained weights measured the same at 1 and 2 threads, but that is a
property of today's kernels and shapes, not a promise; so the count is part of the experiment rather than a reading
of the cores free at a stage's start: the run spec's `torch_threads` (default: the cores this process may use, from
`os.sched_getaffinity`, which load does not change), set in every process that trains or runs a model (a stage
exports it as ENV0_TORCH_THREADS for the libraries and child processes it starts), part of the tiny student's cache
key, and named in the report's lineage. (What did move a run's digits with the load was which requests the local
student batched together: agent/providers/lockstep.py.)

Speed under load: threads that spin while they wait for each other at every parallel region made a step far slower
than the share of the CPU the run lost (3.7x at 2 threads beside 2 busy processes on 2 cores, where a fair share is
2x). With OpenMP's passive wait policy a waiting thread sleeps instead, but on free cores waking it at every
parallel region costs what the second thread gains; so the package chooses the policy from the load before torch
loads (env0_posttrain/__init__.py: PASSIVE under load, a bounded spin on free cores) unless the environment sets one.
`bench/threads_under_load_bench.py` measures both.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

log = logging.getLogger("env0_posttrain.train")
ENV = "ENV0_TORCH_THREADS"


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    source: str  # where the number came from

    def __str__(self) -> str:
        return f"torch threads: {self.threads} ({self.source})"


def allowed_cores() -> int:
    """The cores this process may run on: the default thread count (a property of the machine, not of its load)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def resolve(spec_threads: int | None) -> ThreadChoice:
    """The run's thread count: the spec's, else the cores this process may use."""
    if spec_threads is not None:
        return ThreadChoice(spec_threads, "run spec torch_threads")
    return ThreadChoice(allowed_cores(), "the cores this process may use")


def use_run_threads(spec_threads: int | None) -> ThreadChoice:
    """A stage's start: the run's count for this process (torch, if loaded) and for what it starts."""
    from env0_posttrain.util.process_env import export

    choice = resolve(spec_threads)
    export(ENV, str(choice.threads))
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(choice.threads)
    return choice


def current() -> ThreadChoice:
    """The count this process runs at: ENV0_TORCH_THREADS (a stage sets it from its spec), else the cores allowed."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return resolve(None)
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{ENV}={value!r}: expected a positive number of threads")
    return ThreadChoice(int(value), ENV)


def apply(torch_module=None) -> ThreadChoice:
    """Set torch's intra-op threads to `current()`; log and return it. Called where a model is trained or loaded."""
    if torch_module is None:
        import torch as torch_module
    choice = current()
    torch_module.set_num_threads(choice.threads)
    log.info("%s", choice)
    return choice
