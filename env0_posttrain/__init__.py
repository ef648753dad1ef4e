"""env0-posttrain: the agent post-training loop as a Dagster asset graph."""

import os as _os


def _wait_policy(load: float, cores: int) -> str:
    """OpenMP's wait policy for this process, chosen before torch loads (it cannot change afterwards). On free cores
    threads spin between parallel regions: the tiny student's training step (many small regions) then runs on both
    cores, where sleeping threads, woken at every region, made 2 threads no faster than 1 (0.30 s a step either way,
    0.15-0.17 s spinning). With other work on the cores (1-minute load at least half of them) threads sleep, so a run
    slows by about the CPU share it lost, not several times that (util/torch_threads.py). The policy changes how
    threads wait, never how work is split, so results are the same either way."""
    return "ACTIVE" if load < cores / 2 else "PASSIVE"


if "OMP_WAIT_POLICY" not in _os.environ:
    _os.environ["OMP_WAIT_POLICY"] = _wait_policy(_os.getloadavg()[0], len(_os.sched_getaffinity(0)))
