"""One sandbox's cgroups: a process limit (pids) and a memory limit that every command of the sandbox sits in.

Commands cannot leave them: each command is born inside them (sandbox/keeper.py's Spawner), runs in a cgroup
namespace of its own and sees no cgroup filesystem (its root has no /sys), and holds no capability to mount one.
The sandbox's keeper process and the runner stay outside, so a command that hits a limit fails itself only.

Where they can be made:
- cgroup v1 (a `pids` and a `memory` hierarchy, as on this project's machines): a child of the runner's own cgroup
  in each, when the runner may write there (root, or a delegated subtree);
- cgroup v2: a child of the runner's cgroup when the controller is already enabled in its `cgroup.subtree_control`
  (in practice: the runner at the root of the hierarchy, e.g. root in a container).
Elsewhere (an unprivileged user on a systemd host) there are none: `SandboxCgroup.make` returns None and the
sandbox runs without these two limits (the docs say what holds then).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

CONTROLLERS = ("pids", "memory")


def _mounts() -> tuple[dict[str, Path], Path | None]:
    """(v1 controller -> its hierarchy's mount point, the v2 mount point)."""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return v1, v2
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == "cgroup2" and v2 is None:
            v2 = Path(fields[4])
        elif tail[0] == "cgroup":
            for opt in tail[2].split(","):
                if opt in CONTROLLERS:
                    v1.setdefault(opt, Path(fields[4]))
    return v1, v2


def _own_paths() -> tuple[dict[str, str], str | None]:
    """(v1 controller -> this process's cgroup path in it, this process's v2 path)."""
    v1: dict[str, str] = {}
    v2: str | None = None
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return v1, v2
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        if ctrls == "":
            v2 = path
        for c in ctrls.split(","):
            if c in CONTROLLERS:
                v1[c] = path
    return v1, v2


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class SandboxCgroup:
    """The cgroup directories of one sandbox (one per v1 hierarchy, or one v2 directory holding both limits)."""

    def __init__(self, dirs: dict[str, Path]):
        self.dirs = dirs  # controller -> directory (the same directory twice on v2)

    @property
    def procs_files(self) -> list[str]:
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    @property
    def tasks_files(self) -> list[str]:
        """cgroup v1 only (one thread may be moved there alone); empty when any of the directories is v2."""
        files = sorted({str(d / "tasks") for d in self.dirs.values()})
        return files if all(Path(f).exists() for f in files) else []

    @property
    def kinds(self) -> list[str]:
        return sorted(self.dirs)

    @classmethod
    def make(cls, max_processes: int, memory_bytes: int) -> SandboxCgroup | None:
        name = f"env0-sandbox-{uuid.uuid4().hex[:12]}"
        v1_mounts, v2_mount = _mounts()
        v1_own, v2_own = _own_paths()
        dirs: dict[str, Path] = {}
        made: list[Path] = []
        try:
            for c in CONTROLLERS:
                if c in v1_mounts and c in v1_own:
                    d = v1_mounts[c] / v1_own[c].lstrip("/") / name
                elif v2_mount is not None and v2_own is not None and c in _subtree(v2_mount / v2_own.lstrip("/")):
                    d = v2_mount / v2_own.lstrip("/") / name
                else:
                    continue
                if d not in made:
                    d.mkdir()
                    made.append(d)
                dirs[c] = d
            if "pids" in dirs:
                _write(dirs["pids"] / "pids.max", str(max_processes))
            if "memory" in dirs:
                m = dirs["memory"]
                if (m / "memory.max").exists():  # v2
                    _write(m / "memory.max", str(memory_bytes))
                    if (m / "memory.swap.max").exists():
                        _write(m / "memory.swap.max", "0")
                else:
                    _write(m / "memory.limit_in_bytes", str(memory_bytes))
                    if (m / "memory.memsw.limit_in_bytes").exists():  # no swap beyond the limit either
                        _write(m / "memory.memsw.limit_in_bytes", str(memory_bytes))
        except OSError:
            for d in made:
                try:
                    d.rmdir()
                except OSError:
                    pass
            return None
        return cls(dirs) if dirs else None

    def _read_key(self, controller: str, file: str, key: str) -> int:
        d = self.dirs.get(controller)
        if d is None:
            return 0
        try:
            for line in (d / file).read_text().splitlines():
                k, _, v = line.partition(" ")
                if k == key:
                    return int(v)
        except (OSError, ValueError):
            pass
        return 0

    def refused(self) -> int:
        """Forks refused at the process limit so far."""
        return self._read_key("pids", "pids.events", "max")

    def oom_kills(self) -> int:
        """Processes killed at the memory limit so far."""
        d = self.dirs.get("memory")
        file = "memory.events" if d is not None and (d / "memory.events").exists() else "memory.oom_control"
        return self._read_key("memory", file, "oom_kill")

    def pids(self) -> list[int]:
        out: set[int] = set()
        for f in self.procs_files:
            try:
                out.update(int(x) for x in Path(f).read_text().split())
            except OSError:
                pass
        return sorted(out)

    def remove(self, rounds: int = 50) -> None:
        """Kill whatever is left in it (nothing, normally: each command's pid namespace ended with it), then rmdir."""
        for _ in range(rounds):
            rest = self.pids()
            if not rest:
                break
            for p in rest:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        left = set(self.dirs.values())
        for _ in range(rounds):  # a process just killed may take a moment to leave
            for d in list(left):
                try:
                    d.rmdir()
                    left.discard(d)
                except FileNotFoundError:
                    left.discard(d)
                except OSError:
                    pass
            if not left:
                break
            time.sleep(0.01)


def _subtree(path: Path) -> list[str]:
    try:
        return (path / "cgroup.subtree_control").read_text().split()
    except OSError:
        return []
