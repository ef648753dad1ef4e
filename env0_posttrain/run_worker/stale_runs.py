"""Runs whose process was killed (kill -9, OOM, a closed laptop) stay STARTED and keep their pool slots.

A SIGKILLed `run materialize` cannot report its own failure: Dagster keeps the run STARTED and its
steps' concurrency-pool slots claimed, so the next materialization of that partition waits on
"Step blocked by limit for pool ..." forever. Under `dagster dev` the code server reports a dead
run worker and the daemon's run monitoring frees slots of finished runs (dagster.yaml); without a
daemon nobody does. `sweep_dead_runs` does it before the CLI materializes a partition and again while
one of its steps waits on a pool (`pool_wait.py`): a run of any partition that is unfinished but whose
process is gone on this machine is marked failed, and slots still held by finished runs are freed. The
store resumes the rest.

Which process ran a run: the `env0/pid` and `env0/host` tags the CLI puts on its runs, else the pid
Dagster's run worker reports in its "Started process for run" engine event.
"""

from __future__ import annotations

import logging
import os
import socket

import dagster as dg
from dagster._core.events import DagsterEventType
from dagster._core.storage.dagster_run import FINISHED_STATUSES, DagsterRunStatus, RunsFilter

from env0_posttrain.util.processes import process_alive

PID_TAG = "env0/pid"
HOST_TAG = "env0/host"
PARTITION_TAG = "dagster/partition"
UNFINISHED = [DagsterRunStatus.STARTING, DagsterRunStatus.STARTED, DagsterRunStatus.CANCELING]

log = logging.getLogger("env0_posttrain.defs")


def process_tags() -> dict[str, str]:
    """Tags that let a later sweep tell whether the process running a run is still alive."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def _run_pid(instance: dg.DagsterInstance, run: dg.DagsterRun) -> int | None:
    if PID_TAG in run.tags:
        if run.tags.get(HOST_TAG) != socket.gethostname():
            return None  # another machine's process: nothing to tell from here
        return int(run.tags[PID_TAG])
    for record in instance.get_records_for_run(run.run_id, of_type=DagsterEventType.ENGINE_EVENT).records:
        event = record.event_log_entry.dagster_event
        data = event.engine_event_data if event else None
        pid = data.metadata.get("pid") if data and data.metadata else None
        if pid is not None and "Started process for run" in (event.message or ""):
            return int(pid.value)
    return None


def _alive(pid: int, started_at: float | None) -> bool:
    return process_alive(pid, started_at)


def sweep_dead_runs(instance: dg.DagsterInstance, partition: str | None = None) -> list[str]:
    """Mark runs whose process is gone as failed and free their pool slots; their ids. Every partition's by
    default: a dead run of another partition holds a pool slot this one's steps wait on just the same."""
    swept = []
    tags = {PARTITION_TAG: partition} if partition else None
    for record in instance.get_run_records(RunsFilter(statuses=UNFINISHED, tags=tags)):
        run = record.dagster_run
        pid = _run_pid(instance, run)
        if pid is None or pid == os.getpid() or _alive(pid, record.start_time or record.create_timestamp.timestamp()):
            continue
        where = run.tags.get(PARTITION_TAG, "?")
        instance.report_run_failed(run, f"env0-posttrain: the process of this run (pid {pid}) is gone (killed?); "
                                        "marked failed and its pool slots freed")
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        log.warning("run %s of partition %s: its process %d is gone; marked it failed and freed its pool slots",
                    run.run_id, where, pid)
        swept.append(run.run_id)
    holding = instance.event_log_storage.get_concurrency_run_ids()
    if holding:
        for record in instance.get_run_records(RunsFilter(run_ids=list(holding), statuses=FINISHED_STATUSES)):
            instance.event_log_storage.free_concurrency_slots_for_run(record.dagster_run.run_id)
    return swept


def describe_run(instance: dg.DagsterInstance, run_id: str) -> str:
    """'run 1a2b3c4d (partition demo, pid 123)': who holds a pool slot, in the words a user can act on."""
    record = instance.get_run_record_by_id(run_id)
    if record is None:
        return f"run {run_id[:8]} (gone from the instance)"
    pid = _run_pid(instance, record.dagster_run)
    where = f"partition {record.dagster_run.tags.get(PARTITION_TAG, '?')}"
    return f"run {run_id[:8]} ({where}, {record.dagster_run.status.value.lower()}" + (
        f", pid {pid})" if pid is not None else ")")
