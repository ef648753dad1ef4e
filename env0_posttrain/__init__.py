"""env0-posttrain: the agent post-training loop as a Dagster asset graph."""

import os as _os


DECIDED = "ENV0_OMP_WAIT"  # the choice, once per run: a stage's child processes inherit it rather than re-read a
# load that the run's own earlier steps raised


def _wait_policy(load: float, cores: int) -> str:
    """How OpenMP's threads wait in this run, chosen before torch loads (libgomp reads it once). On free cores
    "BOUNDED": no OMP_WAIT_POLICY, so libgomp spins a bounded while (its GOMP_SPINCOUNT default) and then sleeps:
    a training step's many small parallel regions find both threads awake, and a process that waits for its child
    (a stage launched through Pipes) burns no core; `ACTIVE` would spin for ever (a whole core, measured), and
    PASSIVE wakes a sleeping thread at every region (2 threads no faster than 1). With other work on the cores
    (1-minute load at least half of them) "PASSIVE", so a run slows by about the CPU share it lost, not several
    times that (util/torch_threads.py). How threads wait never changes how work is split: results are the same."""
    return "BOUNDED" if load < cores / 2 else "PASSIVE"


if "OMP_WAIT_POLICY" not in _os.environ and DECIDED not in _os.environ:
    _os.environ[DECIDED] = _wait_policy(_os.getloadavg()[0], len(_os.sched_getaffinity(0)))
    if _os.environ[DECIDED] == "PASSIVE":
        _os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
