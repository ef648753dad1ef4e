"""A dead run does not hold other runs: a real `run materialize` of partition B meets a pool slot held by a run
of partition A. Held by a dead process, the slot is freed before B starts; held by a live one, B says which
pool it waits on and which run holds it, starts once that holder is killed -9, and stops on Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

from env0_posttrain.defs.assets import task_set
from env0_posttrain.orchestration.launch import instance_for
from env0_posttrain.util.paths import Paths
from env0_posttrain_tests.support.paths import REPO as ROOT

POOL = task_set.op.pool  # the cheapest asset to materialize


def _cli(data: Path, *args: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_DISABLE_TELEMETRY": "1"}
    sink = open(log, "w")
    return subprocess.Popen([sys.executable, "-m", "env0_posttrain.cli.main", *args, "--data-dir", str(data)], env=env,
                            cwd=str(ROOT), text=True, stdout=sink, stderr=subprocess.STDOUT)


def _wait_for(cond, timeout_s: float, what: str) -> None:
    deadline = time.time() + timeout_s
    while not cond():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.fixture
def env(tmp_path: Path, monkeypatch):
    """Partition B registered; a STARTED run of partition A (owned by a pid we pick) holding the pool slot."""
    data = tmp_path / "data"
    paths = Paths(data)
    log = tmp_path / "new.log"
    new = _cli(data, "run", "new", "b", "--set", "tasks.n_train=2", "--set", "tasks.n_eval=1", log=log)
    assert new.wait(timeout=180) == 0, log.read_text()
    monkeypatch.setenv("DAGSTER_HOME", str(paths.dagster_home))
    holders: list[subprocess.Popen] = []

    def hold(alive: bool) -> tuple[str, subprocess.Popen]:
        proc = subprocess.Popen(["sleep", "600"])
        holders.append(proc)
        if not alive:
            proc.kill()
            proc.wait()
        run_id = str(uuid.uuid4())
        with instance_for(paths) as instance:
            instance.add_run(DagsterRun(job_name="__ephemeral_asset_job__", run_id=run_id,
                                        status=DagsterRunStatus.STARTED,
                                        tags={"dagster/partition": "a", "env0/pid": str(proc.pid),
                                              "env0/host": socket.gethostname()}))
            storage = instance.event_log_storage
            storage.initialize_concurrency_limit_to_default(POOL)
            assert storage.claim_concurrency_slot(POOL, run_id, "sft_rows").is_claimed
        return run_id, proc

    def slot_holders() -> list[str]:
        with instance_for(paths) as instance:
            return [s.run_id for s in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots]

    yield data, hold, slot_holders, tmp_path
    for proc in holders:
        proc.kill()
        proc.wait()


def test_a_slot_held_by_a_dead_run_of_another_partition_is_freed_before_the_run_starts(env):
    data, hold, slot_holders, tmp = env
    dead, _ = hold(alive=False)
    log = tmp / "b.log"
    proc = _cli(data, "run", "materialize", "b", "--select", "task_set", log=log)
    try:
        assert proc.wait(timeout=300) == 0, log.read_text()  # today's sweep looked at partition b only: forever
    finally:
        proc.kill()
    out = log.read_text()
    assert f"run {dead} of partition a: its process" in out and "marked it failed" in out
    with instance_for(Paths(data)) as instance:
        assert instance.get_run_by_id(dead).status == DagsterRunStatus.FAILURE
    assert slot_holders() == []


def _waiting_b(data, tmp):
    """Run b's task_set behind the held pool slot; (the process, its log) once it says it is waiting."""
    log = tmp / "b.log"
    proc = _cli(data, "run", "materialize", "b", "--select", "task_set", log=log)
    try:
        _wait_for(lambda: "waiting:" in log.read_text() or proc.poll() is not None, 240, "the wait to be said")
        assert proc.poll() is None, log.read_text()
    except BaseException:
        proc.kill()
        raise
    return proc, log


def test_a_waiting_run_says_what_it_waits_for_and_starts_once_the_holder_is_killed(env):
    data, hold, slot_holders, tmp = env
    holder, sleeper = hold(alive=True)
    proc, log = _waiting_b(data, tmp)
    try:
        line = next(ln for ln in log.read_text().splitlines() if "waiting:" in ln)
        assert f"task_set waits for a slot of pool '{POOL}' (limit 1), held by run {holder[:8]} (partition a, " \
               f"started, pid {sleeper.pid})" in line and "Ctrl-C" in line
        assert proc.poll() is None and slot_holders() == [holder]
        killed_at = time.time()
        sleeper.kill()  # kill -9 of the run that holds the slot
        assert proc.wait(timeout=300) == 0, log.read_text()
        print(f"run b finished {time.time() - killed_at:.1f} s after the holder's kill -9 (task_set included)")
    finally:
        proc.kill()
    assert "marked it failed" in log.read_text() and "task_set" in log.read_text()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_waiting_run_stops_on_ctrl_c_or_sigterm_and_gives_up_its_place(env, sig):
    data, hold, slot_holders, tmp = env
    holder, _ = hold(alive=True)
    proc, log = _waiting_b(data, tmp)
    try:
        proc.send_signal(sig)
        assert proc.wait(timeout=120) != 0
    finally:
        proc.kill()
    assert "stopped (interrupted)" in log.read_text()
    assert slot_holders() == [holder]  # the holder keeps its slot, and nothing is left pending for run b
    with instance_for(Paths(data)) as instance:
        info = instance.event_log_storage.get_concurrency_info(POOL)
        assert [p.run_id for p in info.pending_steps] == [holder]  # the holder's own claim, nothing of run b
        (b_run,) = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": "b"}))
        assert b_run.status in (DagsterRunStatus.CANCELED, DagsterRunStatus.FAILURE)
