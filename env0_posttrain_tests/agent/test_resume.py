"""Resume after SIGKILL: finished episodes survive, the rerun runs only the missing ones."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from env0_posttrain_tests.support.agent import read_jsonl_episodes, resume_worker
from env0_posttrain_tests.support.paths import REPO


def test_sigkill_mid_run_loses_nothing_finished_and_rerun_fills_the_rest(tmp_path):
    out = tmp_path / "episodes.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = f"from env0_posttrain_tests.support.agent import resume_worker; resume_worker({str(out)!r})"
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and len(read_jsonl_episodes(out)) < 4 and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    before = {tuple(r["key"]): r["episode"] for r in read_jsonl_episodes(out)}
    assert 4 <= len(before) < 12, "the kill must land mid-run"

    stats = resume_worker(str(out))  # the re-materialization
    after = read_jsonl_episodes(out)
    keys = [tuple(r["key"]) for r in after]
    assert len(keys) == len(set(keys)) == 12, "nothing lost, nothing duplicated"
    assert stats == {"skipped": len(before), "completed": 12 - len(before)}, "only the missing ones ran"
    for r in after:  # episodes finished before the kill are untouched
        if tuple(r["key"]) in before:
            assert r["episode"] == before[tuple(r["key"])]
    assert all(r["episode"]["stop_condition"] == "agent_completed" and r["episode"]["verifier"]["reward"] == 1.0
               for r in after)
