"""The interleaving that lost a row in the 8-writer test, forced deterministically.

DuckDB reads the database headers *before* it takes its own file lock. A process that opens the
file while another still has it open can read the old headers, get the lock once the other has
checkpointed and let go, and then work from the stale state: the other's committed row is gone
once it checkpoints. The store holds a sidecar lock across connect..close, so the second process
does not touch the database file until the first one has closed it.

Here process B's DuckDB lock call is stalled with strace fault injection (delay on entry) while A
commits and closes; without the sidecar lock A's row is lost every time. Skipped without strace
or where ptrace is not allowed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from env0_posttrain.store import Store
from env0_posttrain_tests.support.paths import REPO as ROOT


_EP = (
    "from env0_posttrain.agent.records import Episode\n"
    "from env0_posttrain.tasks.model import VerifierResult\n"
    "def ep(t): return Episode(run_id='r', arm='base', task_id=t, trial=0, model='m', messages=[], tools=[],"
    " stop_condition='agent_completed', verifier=VerifierResult(reward=1.0))\n"
)
# A writes its row inside a transaction and waits (connection open) until told to commit and close.
_A = _EP + (
    "import os, sys, time\n"
    "from env0_posttrain.store import Store\n"
    "s = Store(sys.argv[1]); rid = sys.argv[3]\n"
    "with s.transaction() as con:\n"
    "    e = ep('a1')\n"
    "    con.execute('INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [rid, e.run_id, e.arm,"
    " e.task_id, e.trial, e.model, e.reward, e.passed, e.stop_condition, e.n_tool_calls, e.duration_s,"
    " e.model_dump_json(), time.time()])\n"
    "    open(sys.argv[2] + '/a_open', 'w').close()\n"
    "    while not os.path.exists(sys.argv[2] + '/a_close'): time.sleep(0.01)\n"
)
# B is ready (imports done, store built) before A opens and strace attaches; it writes one row when told to.
_B = _EP + (
    "import os, sys, time\n"
    "from env0_posttrain.store import Store\n"
    "s = Store(sys.argv[1]); rid = sys.argv[3]\n"
    # B says when it starts waiting for the sidecar lock: a contender holds the lock file open only for
    # microseconds per try (open, flock, close), too briefly for /proc to see it reliably.
    "lock_type = type(s._file_lock); acquire = lock_type.acquire\n"
    "def marked(self, *a, **k):\n"
    "    open(sys.argv[2] + '/b_at_lock', 'w').close()\n"
    "    return acquire(self, *a, **k)\n"
    "lock_type.acquire = marked\n"
    "open(sys.argv[2] + '/b_ready', 'w').close()\n"
    "while not os.path.exists(sys.argv[2] + '/b_go'): time.sleep(0.01)\n"
    "s.write_episode(rid, ep('b1'))\n"
)


def _wait(cond, what: str, timeout: float = 600.0) -> None:
    """Wait for a state, not for a time: the timeout only stops a test that would hang (2 busy cores and
    strace's 2 s per fcntl can take minutes)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _touches_db(pid: int, db: Path) -> bool:
    """B opened the database read-write (the open just before DuckDB's lock call) or the sidecar lock."""
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
            flags = int(Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError):
            continue
        if target == f"{db}.lock" or (target == str(db) and flags & 3 == os.O_RDWR):
            return True
    return False


def _traced(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("TracerPid:")[1].split()[0]) != 0


@pytest.mark.skipif(shutil.which("strace") is None or not Path("/proc/self/fdinfo").exists(), reason="needs strace, /proc")
def test_a_second_opener_cannot_work_from_headers_read_before_the_first_closed(tmp_path: Path):
    db = tmp_path / "db.duckdb"
    rid = Store(db).open_round("r", "base", "m", 2)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen] = []
    try:
        b = subprocess.Popen([sys.executable, "-c", _B, str(db), str(tmp_path), rid], env=env)
        procs.append(b)
        _wait(lambda: (tmp_path / "b_ready").exists() or b.poll() is not None, "B to get ready")
        a = subprocess.Popen([sys.executable, "-c", _A, str(db), str(tmp_path), rid], env=env)
        procs.append(a)
        _wait(lambda: (tmp_path / "a_open").exists() or a.poll() is not None, "A to open its transaction")
        assert a.poll() is None and b.poll() is None
        # Stall every fcntl of B's main thread by 2 s: DuckDB's file lock call is one of them.
        tracer = subprocess.Popen(["strace", "-qq", "-o", os.devnull, "-e", "trace=fcntl",
                                   "-e", "inject=fcntl:delay_enter=2000000", "-p", str(b.pid)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(tracer)
        _wait(lambda: _traced(b.pid) or tracer.poll() is not None, "strace to attach")
        if tracer.poll() is not None:
            pytest.skip("strace cannot attach here (ptrace not permitted)")
        (tmp_path / "b_go").touch()
        # B waits for the sidecar lock A holds (today's store), or, without it, sits in DuckDB's stalled lock call
        # with the database open read-write (the race this test reproduces).
        _wait(lambda: (tmp_path / "b_at_lock").exists() or _touches_db(b.pid, db), "B to reach the database or its lock")
        (tmp_path / "a_close").touch()  # A commits, checkpoints and lets go while B sits in its lock call
        assert a.wait(600) == 0
        assert b.wait(600) == 0
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.kill()
                p.wait()
    rows = Store(db).query("SELECT task_id FROM episodes ORDER BY task_id")
    assert rows == [("a1",), ("b1",)]
