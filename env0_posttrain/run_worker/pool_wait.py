"""A step waiting on a concurrency-pool slot: say what it waits for, free what dead runs hold, stop on Ctrl-C.

Dagster's executor loop waits for a pool slot by asking `InstanceConcurrencyContext` how long to sleep until
its next claim; in dagster 1.13 that answer is `min([0, ...])`, never positive, so the loop spins (73 % of a
core in the audit). And while no step runs, a SIGINT or SIGTERM is only recorded (`capture_interrupts`) and
looked at again when a step starts: a blocked `run materialize` ignored both. `install()` replaces that one
method: it sleeps until the next claim is due (at most `MAX_SLEEP_S`, so a recorded interrupt is seen within
a second) and turns a recorded interrupt into Dagster's own interruption, which ends the run as cancelled.

`PoolWatch` runs beside an in-process materialization: while one of the run's steps waits it sweeps runs whose
process died (any partition: `stale_runs.sweep_dead_runs`), so a kill -9 elsewhere frees the slot within
seconds, and it logs which pool the step waits on and which run holds it.
"""

from __future__ import annotations

import logging
import os
import threading
import time

import dagster as dg
from dagster._core.errors import DagsterExecutionInterruptedError
from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext
from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter
from dagster._utils.interrupts import check_captured_interrupt

from env0_posttrain.run_worker.stale_runs import describe_run, sweep_dead_runs

MAX_SLEEP_S = 1.0
REPEAT_S = 30.0  # a wait that has not changed is said again this often
log = logging.getLogger("env0_posttrain.defs")


INTERRUPTED = threading.Event()  # set when a recorded interrupt ended a wait: the CLI says so


def _seconds_to_next_claim(self: InstanceConcurrencyContext) -> float:
    if check_captured_interrupt():
        INTERRUPTED.set()
        raise DagsterExecutionInterruptedError("interrupted while waiting for a concurrency pool slot")
    if not self._pending_claims or not self._pending_timeouts:
        return 0.0
    return min(MAX_SLEEP_S, max(0.0, min(self._pending_timeouts.values()) - time.time()))


def install() -> None:
    """Idempotent; called where Dagster executes this project's runs (the CLI, the code location)."""
    InstanceConcurrencyContext.interval_to_next_pending_claim_check = _seconds_to_next_claim


def waits(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """One line per pool a step of `run_id` waits on: the pool, its limit and the runs that hold its slots."""
    storage = instance.event_log_storage
    lines = []
    for pool in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(pool)
        steps = [p.step_key for p in info.pending_steps if p.run_id == run_id and p.assigned_timestamp is None]
        if not steps:
            continue
        holders = sorted({s.run_id for s in info.claimed_slots if s.run_id != run_id})
        held = "; ".join(describe_run(instance, r) for r in holders) or "no run (a slot is about to be assigned)"
        lines.append(f"{', '.join(steps)} waits for a slot of pool {pool!r} (limit {info.slot_count}), held by {held}")
    return lines


class PoolWatch(threading.Thread):
    """Beside `execute_in_process` in this process: finds its run (tagged with this pid), and while a step of it
    waits on a pool, sweeps dead runs every `interval_s` and logs the wait when it changes (else every 30 s)."""

    def __init__(self, instance: dg.DagsterInstance, launch_tag: tuple[str, str], interval_s: float = 1.0):
        super().__init__(name="env0-pool-watch", daemon=True)
        self.instance, self.launch_tag, self.interval_s = instance, launch_tag, interval_s
        self.stopped = threading.Event()
        self.waited: list[str] = []  # every distinct wait line, for the CLI's summary

    def _run_id(self) -> str | None:
        runs = self.instance.get_run_ids(RunsFilter(tags=dict([self.launch_tag]), statuses=[DagsterRunStatus.STARTED]),
                                         limit=1)
        return runs[0] if runs else None

    def run(self) -> None:
        said, said_at, run_id = None, 0.0, None
        while not self.stopped.wait(self.interval_s):
            try:
                run_id = run_id or self._run_id()
                lines = waits(self.instance, run_id) if run_id else []
                if not lines:
                    said = None
                    continue
                sweep_dead_runs(self.instance)  # a holder killed meanwhile: its slots go now
                lines = waits(self.instance, run_id)
                if lines and (lines != said or time.time() - said_at > REPEAT_S):
                    for line in lines:
                        log.warning("waiting: %s (Ctrl-C stops this run)", line)
                        if line not in self.waited:
                            self.waited.append(line)
                    said, said_at = lines, time.time()
            except Exception as err:  # noqa: BLE001 - a watcher must never take the run down
                log.debug("pool watch: %r", err)

    def __enter__(self) -> "PoolWatch":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.join(timeout=10)


def launch_tag() -> tuple[str, str]:
    """A tag naming one launch of this process, so the watcher finds the run it belongs to."""
    return "env0/launch", f"{os.getpid()}-{time.time_ns()}"

