"""The sandbox's spare container (made ahead so a command is only handed over): one serves one command, the
command holds nothing of the channel it came on, a spare that died is replaced by a fresh container, and no spare
outlives its sandbox or its runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from env0_posttrain.sandbox.box import Sandbox, containment_problem
from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain_tests.support.paths import REPO as WORKTREE

pytestmark = pytest.mark.skipif(containment_problem() is not None,
                                reason=f"no confined sandbox here: {containment_problem()}")


def _spares(root: str) -> list[int]:
    """Host pids of the sandbox's processes waiting as a spare (bwrap's own two; the shell is in its pid namespace
    but also listed here)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True, timeout=30).stdout
    return [int(line.split(None, 1)[0]) for line in out.splitlines()
            if root in line and line.rstrip().endswith("-- /bin/sh -s")]


def _of(root: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True, timeout=30).stdout
    return [line for line in out.splitlines() if root in line]


def _wait_for(cond, seconds: float = 20) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


@pytest.fixture()
def sb():
    with env0_sandbox(Workspace.seeded(0), mode="namespaces") as box:
        yield box


def test_each_command_gets_a_container_of_its_own_holding_only_its_request(sb: Sandbox) -> None:
    probe = ("readlink /proc/self/ns/pid /proc/self/ns/mnt; ls /proc/self/fd; readlink /proc/self/fd/0; "
             "ls /dev/shm; echo mark > /dev/shm/mark; env | sort; pwd")
    seen = []
    for _ in range(4):
        res = sb.run(["sh", "-c", probe], timeout=30, output_cap=1 << 16, env={"ODD": "a 'b'\n$c"}, cwd="/logs")
        assert res.returncode == 0, res.stderr
        seen.append(res.stdout.splitlines())
    for lines in seen:
        # fds: 0 1 2 and the one `ls` opened; stdin is /dev/null, never the spare's pipe; no mark of a previous one
        assert lines[2:7] == ["0", "1", "2", "3", "/dev/null"], lines
        env = lines[7:-1]
        expected = "\n".join(f"{k}={v}" for k, v in {**sb.env, "ODD": "a 'b'\n$c", "PWD": "/logs"}.items())
        assert sorted(env) == sorted(expected.splitlines()), env  # exactly the request's environment (sh adds PWD)
        assert lines[-1] == "/logs"
    assert len({(lines[0], lines[1]) for lines in seen}) == 4  # a new pid and mount namespace for each command


def test_a_command_not_found_reads_the_same_from_a_spare_or_a_fresh_container(sb: Sandbox) -> None:
    spare = sb.run(["no-such-command"], timeout=10, output_cap=1000)
    fresh = sb.run(["no=such-command"], timeout=10, output_cap=1000)  # `env` would read it as an assignment
    assert (spare.returncode, spare.stderr) == (127, "no-such-command: No such file or directory\n")
    assert (fresh.returncode, fresh.stderr) == (127, "no=such-command: No such file or directory\n")
    denied = sb.run(["/etc/hostname"], timeout=10, output_cap=1000)
    assert (denied.returncode, denied.stderr) == (126, "/etc/hostname: Permission denied\n")
    assert sb.run(["true"], timeout=10, output_cap=100, cwd="/no-such-folder").returncode == 1


def test_a_spare_that_died_is_replaced_by_a_fresh_container(sb: Sandbox) -> None:
    root = str(sb.root)
    assert sb.run(["true"], timeout=10, output_cap=100).returncode == 0
    assert _wait_for(lambda: len(_spares(root)) >= 2)  # the next command's container, waiting
    for pid in _spares(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert _wait_for(lambda: not _spares(root))
    res = sb.run(["sh", "-c", "echo fine"], timeout=10, output_cap=100)
    assert (res.returncode, res.stdout) == (0, "fine\n"), res.stderr
    assert sb.run(["sh", "-c", "echo again"], timeout=10, output_cap=100).stdout == "again\n"


RUNNER = textwrap.dedent("""
    import os, signal, sys, time
    from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox
    from env0_posttrain.workspace.environment import Workspace
    with env0_sandbox(Workspace.seeded(0), mode="namespaces") as sb:
        assert sb.run(["true"], timeout=30, output_cap=100).returncode == 0
        print(sb.root, flush=True)
        sys.stdin.readline()  # the test saw the spare
        if sys.argv[1] == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
    print("closed", flush=True)
""")


@pytest.mark.parametrize("end", ["closed", "killed"])
def test_no_spare_outlives_its_sandbox_or_its_runner(end: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(WORKTREE)
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, end], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path)
    try:
        root = proc.stdout.readline().strip()
        assert root.startswith("/tmp/env0-sandbox-"), root
        assert _wait_for(lambda: len(_spares(root)) >= 2), _of(root)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == (-signal.SIGKILL if end == "killed" else 0)
        assert _wait_for(lambda: not _of(root)), _of(root)  # the keeper, its spare and every command gone
    finally:
        proc.kill()
        proc.wait()
