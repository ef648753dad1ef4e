"""Two trainings on one device, never: kill -9 of the process that runs the `lora_adapter` step takes its Pipes
training worker with it, and a training its dead process left `running` is marked failed when the next starts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec, write_spec
from env0_posttrain.store import Store
from env0_posttrain_tests.support.paths import REPO as ROOT


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_for(cond, timeout_s: float, what: str) -> None:
    deadline = time.time() + timeout_s
    while not cond():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_kill_9_of_the_orchestrating_process_ends_its_pipes_training_worker(tmp_path: Path):
    paths = Paths(tmp_path / "data")
    write_spec(parse_spec({"run_id": "sleeper"}), paths.runs)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_DISABLE_TELEMETRY": "1"}
    parent = subprocess.Popen([sys.executable, "-m", "env0_posttrain_tests.support.pipes_sleeper", str(paths.root)],
                              env=env, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker_pid = paths.root / "worker.pid"
    worker = None
    try:
        _wait_for(lambda: (worker_pid.exists() and worker_pid.read_text()) or parent.poll() is not None, 240,
                  "the training worker to start")
        assert parent.poll() is None
        worker = int(worker_pid.read_text())
        assert psutil.Process(worker).ppid() == parent.pid
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=30)
        _wait_for(lambda: _gone(worker), 60, f"the worker {worker} to die with its parent")  # today: it trains on
    finally:
        parent.kill()
        if worker is not None and not _gone(worker):
            os.kill(worker, signal.SIGKILL)


def test_a_training_left_running_by_a_dead_process_is_swept_and_a_live_one_refuses_a_second(tmp_path: Path):
    store = Store(tmp_path / "env0.duckdb")
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        dead = store.start_training("r")
        live = store.start_training("other")
        with store.transaction() as con:  # as if other processes had started them: one is gone, one runs
            con.execute("UPDATE training_runs SET pid = ? WHERE train_id = ?", [2**22 + 12345, dead])
            con.execute("UPDATE training_runs SET pid = ?, started_at = ? WHERE train_id = ?",
                        [sleeper.pid, time.time(), live])
        assert [(t, alive) for t, _, alive in store.running_trainings()] == [(dead, False), (live, True)]
        status = dict(store.query("SELECT train_id, status FROM training_runs"))
        assert status == {dead: "failed", live: "running"}
        assert "ended (killed?)" in store.query("SELECT result_json FROM training_runs WHERE train_id = ?", [dead])[0][0]

        with pytest.raises(RuntimeError, match=rf"training {live} is still running in process {sleeper.pid}"):
            store.start_training("other")
        sleeper.kill()
        sleeper.wait()
        again = store.start_training("other")  # its process is gone now: swept, and a new one starts
        status = dict(store.query("SELECT train_id, status FROM training_runs"))
        assert status[live] == "failed" and status[again] == "running"
    finally:
        sleeper.kill()
