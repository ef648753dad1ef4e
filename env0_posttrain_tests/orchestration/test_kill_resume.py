"""kill -9 of a real `run materialize` mid-rollout: the next materialization of the partition is not
blocked by the dead run's pool slot, marks the dead run failed, and resumes from the stored episodes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter

from env0_posttrain.util.paths import Paths
from env0_posttrain.store import Store
from env0_posttrain_tests.support.paths import REPO as ROOT

N_TRAIN = 20


def _cli(data: Path, *args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_DISABLE_TELEMETRY": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen([sys.executable, "-m", "env0_posttrain.cli.main", *args, "--data-dir", str(data)], env=env,
                            cwd=str(ROOT), text=True, **kw)


def _run(data: Path, *args: str) -> str:
    proc = _cli(data, *args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = proc.communicate(timeout=300)  # a run blocked on the dead run's pool slot would never end
    assert proc.returncode == 0, out
    return out


@pytest.mark.slow
def test_sigkill_of_run_materialize_then_rematerialize_resumes_without_loss_or_duplicates(tmp_path: Path):
    data = tmp_path / "data"
    _run(data, "run", "new", "kill", "--set", f"tasks.n_train={N_TRAIN}", "--set", "tasks.n_eval=2",
         "--set", "teacher.concurrency=1")
    _run(data, "run", "materialize", "kill", "--select", "task_set")

    log = tmp_path / "first.log"
    with open(log, "w") as sink:
        first = _cli(data, "run", "materialize", "kill", "--select", "teacher_trajectories", stdout=sink, stderr=sink)
        deadline = time.time() + 240
        while time.time() < deadline and first.poll() is None and log.read_text().count("episode run=kill") < 3:
            time.sleep(0.2)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL

    paths = Paths(data)
    store = Store(paths.db)
    (round_,) = store.rounds("kill", "teacher")
    before = {(e.task_id, e.trial): e for e in store.load_episodes(round_["round_id"])}
    assert round_["status"] == "running" and 3 <= len(before) < N_TRAIN, "the kill must land mid-rollout"
    os.environ["DAGSTER_HOME"] = str(paths.dagster_home)
    instance = dg.DagsterInstance.get()
    (dead,) = instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.STARTED], tags={"dagster/partition": "kill"}))
    held = instance.event_log_storage.get_concurrency_info("teacher_api").claimed_slots
    assert [s.run_id for s in held] == [dead.run_id], "the dead run holds the teacher_api slot"

    out = _run(data, "run", "materialize", "kill", "--select", "teacher_trajectories")
    assert f"{len(before)} of {N_TRAIN} episodes already stored" in out and "marked it failed" in out

    instance = dg.DagsterInstance.get()
    assert instance.get_run_by_id(dead.run_id).status == DagsterRunStatus.FAILURE
    assert instance.event_log_storage.get_concurrency_info("teacher_api").claimed_slots == []
    (round_,) = store.rounds("kill", "teacher")  # the same round, resumed and finished
    after = store.load_episodes(round_["round_id"])
    keys = [(e.task_id, e.trial) for e in after]
    assert round_["status"] == "finished" and len(keys) == len(set(keys)) == N_TRAIN, "none lost, none duplicated"
    kept = [e for e in after if (e.task_id, e.trial) in before]
    assert len(kept) == len(before) and all(e.model_dump() == before[(e.task_id, e.trial)].model_dump() for e in kept)
    assert f"skipped={len(before)}" in out and f"done={N_TRAIN - len(before)}" in out
