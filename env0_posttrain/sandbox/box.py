"""env0's container layout without Docker: one sandbox per package (or episode), kept alive across commands.

Inside (as in env0's image): `/tasks/<name>/data` (the package's data, read-only; `TASKS_DIR=/tasks` holds this
task only), `/data` (the needle manifest `_needle_manifest_<name>.json`), `/logs/verifier`, `/logs/agent`, a
private `/tmp`, `/solution` and `/tests` (read-only, empty until the runner puts the package's scripts there), and
every service at env0's own URL (`http://localhost:9001` ...) on the sandbox's private loopback. Nothing else of
the host: the root is an allowlist (sandbox/root.py), and only /tmp, /data and /logs are writable, all three on one
tmpfs of the keeper's with the limits' size and file count (never the host's disk).

How: each command is a bubblewrap container of its own (user, pid, mount, ipc, uts and cgroup namespaces; a non-root
uid with no capabilities; a cleared environment; hard rlimits; a seccomp filter, sandbox/seccomp.py; the sandbox's
pids and memory cgroups where the machine lets us make them, sandbox/cgroup.py). They share one network namespace
and one mount namespace, held by the sandbox's keeper (sandbox/keeper.py, started here by `unshare --net --mount`,
in a session keyring of its own): it forwards env0's ports on that loopback to the services' Unix sockets here (the
Workspace stays in this process), runs the commands (each in a container it made ahead while the previous command
ran) and answers on a pipe that no command can reach. Every answer this process reads is size-checked and
validated; a command can fail itself, never the runner. This process reads the writable folders through the
keeper's view of them (/proc/<keeper>/root), and never follows a link a command planted there.

Taking a sandbox down never raises: its folder is removed without recursion or following links
(util/tree_removal.py); what cannot be removed is logged once and swept when the next sandbox is made.

Where bubblewrap or namespaces are not available the sandbox refuses, naming the setting to force the weaker mode:
`ENV0_SANDBOX=unconfined` runs commands on the host (services on free ports, the layout's folders under a temporary
folder, fixed /tmp paths shared, so scripts take a machine-wide lock). The shell surface never runs unconfined.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import itertools
import json
import os
import select
import signal
import stat
import subprocess
import tempfile
import threading
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, ContextManager, Iterator, Literal, Protocol

from pydantic import BaseModel, ValidationError

from ..util.tree_removal import remove_tree, sweep_leftovers
from .cgroup import SandboxCgroup
from .root import (InterpreterError, base_python, bwrap_argv, bwrap_path, containment_problem, interpreters,
                           keeper_unshare, make_etc, open_dir_inside, shims)
from .seccomp import filter_bpf, keyctl_number

MODE_ENV = "ENV0_SANDBOX"
APT_INSTALL = "apt-get install -y bubblewrap libseccomp2"  # what a fresh Debian machine lacks (cli/doctor.py)
Mode = Literal["namespaces", "unconfined"]
LAYOUT = ("/tmp", "/data", "/logs", "/tasks", "/solution", "/tests")
WRITABLE = ("tmp", "data", "logs")  # the folders commands may write: the keeper's tmpfs
PATH_INSIDE = "/.env0/bin:/usr/local/bin:/usr/bin:/bin"
_INIT = Path(__file__).with_name("keeper.py")
_HOST_LOCK = threading.Lock()


class SandboxResult(BaseModel):
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False


class SandboxLimits(BaseModel):
    """What one sandbox's commands may use. The process and memory limits hold where cgroups can be made
    (sandbox/cgroup.py); the file cap (a hard RLIMIT_FSIZE) and the writable space's limits (its tmpfs) always."""
    max_processes: int = 512  # every process of every command of the sandbox at once
    memory_mb: int = 4096  # their memory together (no swap beyond it)
    file_cap: int = 1 << 30  # bytes a command may write to one file
    writable_mb: int = 1024  # /tmp, /data and /logs together (MiB; the tmpfs pages count as memory too)
    writable_files: int = 65536  # files, folders and links in them together


class Surface(Protocol):
    """What a sandbox serves its commands on its private loopback (env0's services: tasks/env0/serve/listeners.py)."""
    ports: tuple[int, ...]  # the loopback ports commands reach it on, each forwarded to `<sock_dir>/<port>.sock`

    def serve(self, sock_dir: Path | None) -> ContextManager[dict[str, str]]:
        """Listen on a Unix socket per port in `sock_dir` (None, unconfined: free loopback ports); yield the
        variables that tell a command where it is."""


class SandboxUnavailable(RuntimeError):
    """The confined sandbox cannot be made here; the message names why and the fallback."""


class _Answer(BaseModel):
    """One answer of the keeper, as read from its pipe (validated before use)."""
    id: int
    returncode: int
    timed_out: bool
    truncated: bool
    stdout: str
    stderr: str


def sandbox_mode() -> Mode:
    mode = os.environ.get(MODE_ENV, "namespaces")
    if mode not in ("namespaces", "unconfined"):
        raise SandboxUnavailable(f"{MODE_ENV}={mode!r}: expected 'namespaces' (default) or 'unconfined'")
    return mode  # type: ignore[return-value]


def _why(detail: str) -> str:
    return (f"env0 sandbox: cannot confine commands here ({detail}); it needs bubblewrap, libseccomp, util-linux "
            f"`unshare` and user namespaces: `{APT_INSTALL}` (Debian; `env0-posttrain doctor` names what else is "
            f"missing). To run the package's scripts "
            f"unconfined on the host instead (no private /tmp or ports, the host's files and environment visible, one "
            f"script at a time), set {MODE_ENV}=unconfined")


class Sandbox:
    """One package's (or one episode's) sandbox: `with Sandbox(surface, package_dir=..., manifest=...) as sb:
    sb.run(["bash", "/tests/test.sh"], timeout=120, output_cap=1 << 20)`. Without a package (a built-in task)
    /tasks is empty and the surface is still served at its ports."""

    def __init__(self, surface: Surface, *, package_dir: Path | None = None, manifest: dict[str, Any] | None = None,
                 mode: Mode | None = None, limits: SandboxLimits | None = None):
        self.package_dir, self.manifest = (Path(package_dir) if package_dir else None), manifest
        self.surface = surface
        self.mode: Mode = mode or sandbox_mode()
        self.limits = limits or SandboxLimits()
        self.name = self.package_dir.name if self.package_dir else None
        self.root = Path()
        self.env: dict[str, str] = {}
        self.cgroup: SandboxCgroup | None = None
        self._stack = ExitStack()
        self._proc: subprocess.Popen | None = None
        self._ids = itertools.count()
        self._pending: dict[int, tuple[Future, int]] = {}
        self._write = threading.Lock()
        self._line_cap = 1 << 16
        self._broken: str | None = None
        self._writable_view: Path | None = None  # the writable folders as this process reaches them (None: root)
        self.teardown_problems: list[str] = []

    # -- layout ------------------------------------------------------------------------------------
    def path(self, inside: str) -> str:
        """Where a command sees the layout path `inside` (itself in a sandbox; under the folder when unconfined)."""
        if self.mode == "unconfined" and any(inside == p or inside.startswith(p + "/") for p in LAYOUT):
            return str(self.root) + inside
        return inside

    def _base(self, inside: str) -> Path:
        """Where this process finds the layout path's root: the writable folders are on the keeper's tmpfs, seen
        through /proc/<keeper>/root (its mount namespace); the rest is the sandbox's folder."""
        top = inside.strip("/").split("/", 1)[0]
        return self._writable_view if self._writable_view is not None and top in WRITABLE else self.root

    def host_path(self, inside: str) -> Path:
        """The layout path as this process sees it. Only for folders no command can write (/solution, /tests), or
        to read what a test planted: elsewhere use read_file / remove_file, which follow no link a command made."""
        return self._base(inside) / inside.lstrip("/")

    def read_file(self, inside: str, cap: int) -> bytes:
        """A regular file a command wrote (e.g. /logs/verifier/reward.json), at most `cap` bytes. A link, a fifo or
        a device in its place, or a folder on the way replaced by a link, is an OSError; a larger file a ValueError."""
        fd, name = open_dir_inside(self._base(inside), inside)
        try:
            f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        finally:
            os.close(fd)
        with os.fdopen(f, "rb") as fh:
            if not stat.S_ISREG(os.fstat(f).st_mode):
                raise OSError(f"{inside}: not a regular file")
            data = fh.read(cap + 1)
        if len(data) > cap:
            raise ValueError(f"{inside}: larger than {cap} bytes")
        return data

    def remove_file(self, inside: str) -> None:
        """Remove `inside` if it is there (a link is removed itself, never what it points at)."""
        try:
            fd, name = open_dir_inside(self._base(inside), inside)
        except FileNotFoundError:
            return
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        finally:
            os.close(fd)

    @property
    def manifest_path(self) -> str:
        return f"/data/_needle_manifest_{self.name}.json"

    def _lay_out(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="env0-sandbox-", dir="/tmp"))
        self._stack.callback(lambda: self.teardown_problems.extend(remove_tree(self.root)))
        for d in ("tmp", "data", "logs/verifier", "logs/agent", "logs/artifacts", "tasks", "solution", "tests",
                  "env0/sock"):
            (self.root / d).mkdir(parents=True)
        (self.root / "tmp").chmod(0o1777)
        bin_dir = self.root / "env0" / "bin"
        shims(bin_dir, "/.env0/bin" if self.mode == "namespaces" else str(bin_dir))
        if self.mode == "namespaces":
            make_etc(self.root / "env0" / "etc")
        if self.package_dir is not None and self.manifest is not None:
            self.host_path(self.manifest_path).write_text(json.dumps(self.manifest, indent=2, default=str))
        if self.mode == "unconfined" and self.package_dir is not None:
            (self.root / "tasks" / self.name).mkdir()
            (self.root / "tasks" / self.name / "data").symlink_to(self.package_dir / "data")

    def _base_env(self, served: dict[str, str]) -> dict[str, str]:
        """Everything a command's environment holds (nothing of this process's own)."""
        path = PATH_INSIDE if self.mode == "namespaces" else \
            f"{self.root / 'env0' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        env = {"PATH": path, "HOME": self.path("/tmp"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "TASKS_DIR": self.path("/tasks"), "LOGS_DIR": self.path("/logs/verifier"),
               **served}
        if self.mode == "unconfined":
            env["TMPDIR"] = self.path("/tmp")
        if self.name is not None:
            env.update(TASK_NAME=self.name, TASK_ROOT=self.path(f"/tasks/{self.name}"),
                       NEEDLE_MANIFEST=self.path(self.manifest_path))
        return env

    # -- lifecycle ---------------------------------------------------------------------------------
    def __enter__(self) -> Sandbox:
        sweep_leftovers()  # what an earlier teardown could not remove (logged then)
        try:
            if self.mode == "namespaces":
                problem = containment_problem()
                if problem is not None:
                    raise SandboxUnavailable(_why(problem))
            self._lay_out()
            sock_dir = self.root / "env0" / "sock" if self.mode == "namespaces" else None
            served = self._stack.enter_context(self.surface.serve(sock_dir))
            self.env = self._base_env(served)
            if self.mode == "namespaces":
                self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        """Never raises: the keeper (and with it every command and the writable tmpfs) ends, the cgroups and the
        sandbox's folder are removed; what could not be is in `teardown_problems` (and logged once)."""
        for step in (self._stop, lambda: self.cgroup.remove() if self.cgroup is not None else None, self._stack.close):
            try:
                step()
            except Exception as e:  # noqa: BLE001 - the next step still runs; the episode goes on
                self.teardown_problems.append(f"{type(e).__name__}: {e}")

    def _start(self) -> None:
        bwrap = bwrap_path()
        assert bwrap is not None
        try:
            extra = interpreters()
        except InterpreterError as e:
            raise SandboxUnavailable(str(e)) from None
        self.cgroup = SandboxCgroup.make(self.limits.max_processes, self.limits.memory_mb << 20)
        data = self.package_dir / "data" if self.package_dir is not None else None
        conf = {"bwrap": bwrap_argv(bwrap, self.root, package_data=data, task_name=self.name, extra_ro=extra),
                "ports": {port: str(self.root / "env0" / "sock" / f"{port}.sock") for port in self.surface.ports},
                "rlimits": {"RLIMIT_FSIZE": self.limits.file_cap, "RLIMIT_CORE": 0},
                "cgroup_tasks": self.cgroup.tasks_files if self.cgroup is not None else [],
                "cgroup_procs": self.cgroup.procs_files if self.cgroup is not None else [],
                "seccomp": base64.b64encode(filter_bpf()).decode(), "keyctl": keyctl_number(),
                "writable": {"root": str(self.root), "dirs": list(WRITABLE), "bytes": self.limits.writable_mb << 20,
                             "files": self.limits.writable_files}}
        argv = [*keeper_unshare(), "--", base_python(), "-S", str(_INIT), json.dumps(conf)]
        log = open(self.root / "env0" / "keeper.log", "wb")
        self._stack.callback(log.close)
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                          env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, close_fds=True)
        except OSError as e:
            raise SandboxUnavailable(_why(f"cannot start unshare: {e}")) from None
        ready = select.select([self._proc.stdout], [], [], 30)[0]
        line = self._proc.stdout.readline(4096).decode(errors="replace") if ready else ""
        if line.strip() != "ready":
            self._proc.kill()
            self._proc.wait()
            self._close_pipes()
            self._proc = None
            detail = line.strip() or ("no answer in 30 s" if not ready else self._log_tail())
            raise SandboxUnavailable(_why(detail))
        self._writable_view = Path(f"/proc/{self._proc.pid}/root") / self.root.relative_to("/")
        threading.Thread(target=self._read_answers, daemon=True, name="env0 sandbox answers").start()

    def _log_tail(self) -> str:
        try:
            with open(self.root / "env0" / "keeper.log", "rb") as fh:
                fh.seek(max(fh.seek(0, os.SEEK_END) - 2000, 0))
                return fh.read(2000).decode(errors="replace").strip()
        except OSError:
            return ""

    def _read_answers(self) -> None:
        """The keeper's answers, one a line: no line may grow past the largest answer a request allows, and each
        is validated; anything else ends the sandbox (its commands fail, the runner goes on)."""
        assert self._proc is not None and self._proc.stdout is not None
        why, buf, seen = "its keeper process ended", bytearray(), 0
        while chunk := self._proc.stdout.read1(1 << 16):
            buf += chunk
            problem = None
            while problem is None and (end := buf.find(b"\n", seen)) >= 0:
                problem = self._deliver(bytes(buf[:end + 1]))
                del buf[:end + 1]
                seen = 0
            seen = len(buf)
            if problem is None and len(buf) > self._line_cap:
                problem = f"an answer longer than {self._line_cap} bytes"
            if problem is not None:
                why = f"protocol error from its keeper ({problem})"
                self._proc.kill()
                break
        self._broken = why
        for n in list(self._pending):
            fut, _ = self._pending.pop(n, (None, 0))
            if fut is not None and not fut.done():
                fut.set_exception(RuntimeError(f"env0 sandbox: {why}"))

    def _deliver(self, line: bytes) -> str | None:
        try:
            msg = _Answer.model_validate_json(line)
            out, err = base64.b64decode(msg.stdout, validate=True), base64.b64decode(msg.stderr, validate=True)
        except (ValidationError, ValueError, binascii.Error) as e:
            return f"unreadable answer: {str(e).splitlines()[0][:200]}"
        fut, cap = self._pending.pop(msg.id, (None, 0))
        if fut is None:
            return f"an answer to no request ({msg.id})"
        if len(out) > cap or len(err) > cap:
            return f"an answer beyond its cap of {cap} bytes"
        fut.set_result(SandboxResult(returncode=msg.returncode, stdout=out.decode("utf-8", "replace"),
                                     stderr=err.decode("utf-8", "replace"), timed_out=msg.timed_out,
                                     truncated=msg.truncated))
        return None

    def _close_pipes(self) -> None:
        assert self._proc is not None
        for f in (self._proc.stdin, self._proc.stdout):
            try:
                f.close()
            except OSError:
                pass

    def _stop(self) -> None:
        if self._proc is None:
            return
        self._writable_view = None
        try:
            self._proc.stdin.close()
            self._proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()
        self._close_pipes()
        self._proc = None

    # -- commands ----------------------------------------------------------------------------------
    def run(self, argv: list[str], *, timeout: float, output_cap: int, env: dict[str, str] | None = None,
            cwd: str = "/") -> SandboxResult:
        """Run one command in the sandbox (same /tmp and services as the previous ones, a container of its own);
        its output is kept up to `output_cap` bytes per stream (`truncated` says so), and it is killed with every
        process it started after `timeout` seconds (`timed_out`)."""
        full_env = {**self.env, **(env or {})}
        if self.mode == "unconfined":
            return _run_host(argv, timeout, output_cap, full_env, self.path(cwd))
        if self._proc is None:
            raise RuntimeError("env0 sandbox: run() outside its `with` block")
        n = next(self._ids)
        fut: Future = Future()
        req = {"id": n, "argv": list(argv), "env": full_env, "cwd": cwd, "timeout": timeout, "cap": output_cap}
        with self._write:
            self._line_cap = max(self._line_cap, 2 * 4 * (output_cap // 3 + 1) + 4096)  # two base64 streams
            self._pending[n] = (fut, output_cap)
            try:
                if self._broken is not None:  # ended while this request was being registered
                    raise OSError
                self._proc.stdin.write((json.dumps(req) + "\n").encode())
                self._proc.stdin.flush()
            except (OSError, ValueError):
                self._pending.pop(n, None)
                raise RuntimeError(f"env0 sandbox: {self._broken or 'its keeper process ended'}") from None
        try:
            return fut.result(timeout=timeout + 60)
        except TimeoutError:
            self._pending.pop(n, None)
            raise RuntimeError(f"env0 sandbox: no answer {timeout + 60:.0f} s after the command started") from None


@contextmanager
def _host_lock() -> Iterator[None]:
    """Unconfined scripts write the same fixed /tmp paths: one at a time on this machine."""
    with _HOST_LOCK, open(Path(tempfile.gettempdir()) / "env0-posttrain-unconfined.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _run_host(argv: list[str], timeout: float, cap: int, env: dict[str, str], cwd: str) -> SandboxResult:
    with _host_lock():
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            return SandboxResult(returncode=127, stdout="", stderr=f"{argv[0]}: {e.strerror}\n")
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    return SandboxResult(returncode=proc.returncode, stdout=out[:cap].decode("utf-8", "replace"),
                         stderr=err[:cap].decode("utf-8", "replace"), timed_out=timed_out,
                         truncated=len(out) > cap or len(err) > cap)
