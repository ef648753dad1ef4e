"""A step process started by multiprocessing (Dagster's multiprocess executor) dies with its parent."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from env0_posttrain.util.parent_watch import die_with_parent


def _step(pid_file: str, guard: bool) -> None:
    if guard:
        die_with_parent()
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(120)


def _run_worker(pid_file: str, guard: bool) -> None:
    mp.get_context("spawn").Process(target=_step, args=(pid_file, guard)).start()
    time.sleep(120)


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.time() + within_s
    while time.time() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("guard", [True, False])
def test_a_step_process_dies_with_its_killed_run_worker_only_when_guarded(tmp_path: Path, guard: bool):
    pid_file = tmp_path / "step.pid"
    worker = mp.get_context("spawn").Process(target=_run_worker, args=(str(pid_file), guard))
    worker.start()
    deadline = time.time() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.time() < deadline and worker.is_alive()
        time.sleep(0.05)
    step = int(pid_file.read_text())
    os.kill(worker.pid, signal.SIGKILL)
    worker.join(10)
    if guard:
        assert _gone(step, 20), "the guarded step process outlived its run worker"
    else:
        assert not _gone(step, 2), "an unguarded step process is orphaned (what the guard is for)"
        os.kill(step, signal.SIGKILL)


def test_a_process_not_started_by_multiprocessing_is_left_alone():
    assert die_with_parent() is False  # pytest itself, like the CLI's in-process run
