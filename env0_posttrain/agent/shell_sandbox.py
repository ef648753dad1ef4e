"""The episode's sandbox: env0's container layout around the task's workspace (tasks/env0/sandbox.py), plus what
an agent's commands need beyond a package's own scripts.

- A pids cgroup holds every process of the sandbox (its first process and all it starts): `max_processes` is the
  most it may hold at once, so a fork bomb stops there; the cgroup's own counter says how many forks it refused.
- Nothing outlives its command: each runs in a pid namespace of its own, which the kernel empties when the command
  ends (a background job, the rest of a fork bomb), so no command keeps working, or spinning, while the agent
  thinks; with the cgroup, anything that still escaped is killed after the command.
- A file a command writes is capped at FILE_CAP bytes (RLIMIT_FSIZE: the sandbox's /tmp is on the host's disk).
- $WORKSPACE_URL names the workspace's whole API at its real paths (every env0 port serves them; the Admin SDK,
  which env0 has no port for, is reached there).
- The shell surface refuses the unconfined mode (ENV0_SANDBOX=unconfined): an agent's commands never run on the
  host itself.

Without a writable pids cgroup (an unprivileged host), the limit on processes and the kill of leftovers are not
available; the pid namespace per command and the sandbox's own limits (time, output, a read-only host, private
loopback) still hold.
"""

from __future__ import annotations

import os
import signal
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from env0_posttrain.runspec import ShellSpec

FILE_CAP = 1 << 30  # bytes a command may write to one file
# Each command in a pid namespace of its own: its shell is that namespace's first process, so when the command
# ends the kernel kills whatever it left behind (background jobs, a fork bomb's rest) and reaps it. Then its
# files are capped (bash's ulimit: prlimit(1) costs ~8 ms a command, the builtin nothing).
WRAPPER = ("unshare", "--pid", "--fork", "--kill-child", "--",
           "bash", "-c", f'ulimit -S -f {FILE_CAP // 1024} && exec "$@"', "confine")
CGROUP = Path("/sys/fs/cgroup")


def _roots() -> Iterator[Path]:
    """Where a pids cgroup can be made: cgroup v1's pids hierarchy, or v2 with the pids controller delegated."""
    if (CGROUP / "pids" / "cgroup.procs").is_file():
        yield CGROUP / "pids"
    try:
        if "pids" in (CGROUP / "cgroup.subtree_control").read_text().split():
            yield CGROUP
    except OSError:
        pass


def package_parts(task: Any) -> tuple[Path | None, dict[str, Any] | None, dict[str, Any] | None]:
    """(package folder, needle manifest, surface extras) of an env0 task; Nones for a built-in task."""
    if task.template_id != "env0":
        return None, None, None
    from env0_posttrain.tasks.env0.verifier import package_of, seeded

    pkg = package_of(task)
    items = task.recipe.items
    _, manifest, extras = seeded(pkg, items["sha256"], task.recipe.seed, items["now"])
    return pkg.root, manifest, extras


class PidsCgroup:
    """A pids cgroup of its own (v1's pids hierarchy, or v2 where the pids controller is enabled), or None."""

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def make(cls, limit: int) -> PidsCgroup | None:
        for root in _roots():
            path = root / f"env0-shell-{uuid.uuid4().hex[:12]}"
            try:
                path.mkdir()
                (path / "pids.max").write_text(str(limit))
                return cls(path)
            except OSError:
                try:
                    path.rmdir()
                except OSError:
                    pass
        return None

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def refused(self) -> int:
        """Forks refused at pids.max so far."""
        try:
            events = dict(line.split() for line in (self.path / "pids.events").read_text().splitlines())
            return int(events.get("max", 0))
        except (OSError, ValueError):
            return 0

    def kill_except(self, keep: set[int], rounds: int = 50) -> int:
        """SIGKILL every process but `keep` until none is left (a fork bomb forks while it is killed)."""
        killed = 0
        for _ in range(rounds):
            rest = [p for p in self.pids() if p not in keep]
            if not rest:
                break
            for p in rest:
                try:
                    os.kill(p, signal.SIGKILL)
                    killed += 1
                except ProcessLookupError:
                    pass
        return killed

    def remove(self) -> None:
        self.kill_except(set())
        try:
            self.path.rmdir()
        except OSError:
            pass


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                for c in (t / "children").read_text().split()]
    except OSError:
        return []


class ConfinedSandbox:
    """The sandbox's `run`, with the leftovers of each command killed and the forks it was refused counted."""

    def __init__(self, sandbox: Any, cgroup: PidsCgroup | None):
        self.sandbox, self.cgroup = sandbox, cgroup
        proc = getattr(sandbox, "_proc", None)  # `unshare` and the namespaces' first process stay
        self.keep = {proc.pid, *_children(proc.pid)} if proc is not None else set()
        if cgroup is not None:
            for pid in self.keep:
                cgroup.add(pid)

    def run(self, argv: list[str], *, timeout: float, output_cap: int, env: dict[str, str] | None = None,
            cwd: str = "/") -> Any:
        wrapped = [*WRAPPER, *argv]
        env = {"WORKSPACE_URL": self.sandbox.env.get("MOCK_GMAIL_URL", ""), **(env or {})}
        try:
            return self.sandbox.run(wrapped, timeout=timeout, output_cap=output_cap, env=env, cwd=cwd)
        finally:
            if self.cgroup is not None:
                self.cgroup.kill_except(self.keep)

    def pids_refused(self) -> int:
        return self.cgroup.refused() if self.cgroup is not None else 0


@contextmanager
def open_task_sandbox(task: Any, ws: Any, limits: ShellSpec) -> Iterator[ConfinedSandbox]:
    from env0_posttrain.tasks.env0.sandbox import Sandbox, sandbox_mode

    if sandbox_mode() != "namespaces":
        raise RuntimeError("the shell surface runs an agent's commands only inside the namespaces sandbox; unset "
                           "ENV0_SANDBOX=unconfined (or use the tools surface)")
    package_dir, manifest, extras = package_parts(task)
    cgroup = PidsCgroup.make(limits.max_processes)
    try:
        with Sandbox(ws, package_dir=package_dir, manifest=manifest, extras=extras) as sb:
            yield ConfinedSandbox(sb, cgroup)
    finally:
        if cgroup is not None:
            cgroup.remove()
