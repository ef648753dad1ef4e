"""env0's container layout without Docker: one sandbox per package (or episode), Linux namespaces, kept alive
across commands.

Inside (as in env0's image): `/tasks/<name>/data` (the package's data, read-only; `TASKS_DIR=/tasks` holds this
task only), `/data` (the needle manifest `_needle_manifest_<name>.json`), `/logs/verifier`, `/logs/agent`, a
private `/tmp`, `/solution` and `/tests` (empty until the runner puts the package's scripts there), and every
service at env0's own URL (`http://localhost:9001` ...) on the sandbox's private loopback. The rest of the host's
filesystem is visible read-only (python, bash, curl, the venv); nothing outside the sandbox's folders is writable.

The seeded Workspace stays in this process (the in-process agent and the verifier act on it): each service listens
on a Unix socket in the sandbox's folder, and the sandbox's first process (sandbox_init.py) forwards its env0 port
to it. `ENV0_SANDBOX=unconfined` runs commands on the host instead (today's mode before sandboxes: services on free
ports, the layout's folders under a temporary folder, fixed /tmp paths shared, so scripts take a machine-wide lock).
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator, Literal

from pydantic import BaseModel

from ...workspace.environment import Workspace
from .server import Env0Surface, serve_services
from .services import SERVICES, service_urls

MODE_ENV = "ENV0_SANDBOX"
Mode = Literal["namespaces", "unconfined"]
LAYOUT = ("/tmp", "/data", "/logs", "/tasks", "/solution", "/tests")
_INIT = Path(__file__).with_name("sandbox_init.py")
_GWS = Path(__file__).with_name("gws.py")
_HOST_LOCK = threading.Lock()


class SandboxResult(BaseModel):
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False


class SandboxUnavailable(RuntimeError):
    """Namespaces could not be made here; the message names the fallback."""


def sandbox_mode() -> Mode:
    mode = os.environ.get(MODE_ENV, "namespaces")
    if mode not in ("namespaces", "unconfined"):
        raise SandboxUnavailable(f"{MODE_ENV}={mode!r}: expected 'namespaces' (default) or 'unconfined'")
    return mode  # type: ignore[return-value]


def _shims(bin_dir: Path) -> None:
    """`gws` (our shim, this interpreter) and `python3` first on PATH. env0 packages' `python3` steps use the standard
    library only: the base interpreter with -S starts in a third of the venv's time (no .pth files); a solve.sh makes
    ~100 such calls. ENV0_PACKAGE_PYTHON names another interpreter."""
    bin_dir.mkdir(parents=True)
    base = os.environ.get("ENV0_PACKAGE_PYTHON") or getattr(sys, "_base_executable", None) or sys.executable
    flag = "" if os.environ.get("ENV0_PACKAGE_PYTHON") else " -S"
    for name, body in (("gws", f'exec "{sys.executable}" -S "{_GWS}" "$@"'), ("python3", f'exec "{base}"{flag} "$@"')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)


def _host_paths_in_tmp() -> list[str]:
    """Host paths under /tmp that commands need (this interpreter, the venv, our checkout for `gws`, PATH entries):
    the private /tmp would hide them, so they are bound back read-only at the same path. A checkout or venv under
    /tmp (a CI clone, pytest's tmp_path) then works as anywhere else."""
    cands = [sys.executable, getattr(sys, "_base_executable", None), sys.prefix, sys.base_prefix, sys.exec_prefix,
             str(Path(__file__).parents[3]), os.environ.get("ENV0_PACKAGE_PYTHON"),
             *os.environ.get("PATH", "").split(os.pathsep)]
    found: set[str] = set()
    for c in filter(None, cands):
        for q in {os.path.abspath(c), os.path.realpath(c)}:
            if q.startswith("/tmp/") and os.path.exists(q):
                found.add(q if os.path.isdir(q) else os.path.dirname(q))
    # the outermost of nested paths only (binds are recursive)
    return sorted(q for q in found if not any(q != o and q.startswith(o + "/") for o in found))


class Sandbox:
    """One package's (or one episode's) sandbox: `with Sandbox(ws, package_dir=..., manifest=...) as sb:
    sb.run(["bash", "/tests/test.sh"], timeout=120, output_cap=1 << 20)`. Without a package (a built-in task)
    /tasks is empty and the services are still at env0's URLs."""

    def __init__(self, ws: Workspace, *, package_dir: Path | None = None, manifest: dict[str, Any] | None = None,
                 extras: dict[str, Any] | None = None, mode: Mode | None = None):
        self.ws, self.package_dir, self.manifest = ws, (Path(package_dir) if package_dir else None), manifest
        self.surface = Env0Surface(ws, extras)
        self.mode: Mode = mode or sandbox_mode()
        self.name = self.package_dir.name if self.package_dir else None
        self.root = Path()
        self.env: dict[str, str] = {}
        self._stack = ExitStack()
        self._proc: subprocess.Popen | None = None
        self._ids = itertools.count()
        self._pending: dict[int, Future] = {}
        self._write = threading.Lock()

    # -- layout ------------------------------------------------------------------------------------
    def path(self, inside: str) -> str:
        """Where a command sees the layout path `inside` (itself in a sandbox; under the folder when unconfined)."""
        if self.mode == "unconfined" and any(inside == p or inside.startswith(p + "/") for p in LAYOUT):
            return str(self.root) + inside
        return inside

    def host_path(self, inside: str) -> Path:
        """The layout path as this process sees it (e.g. /logs/verifier/reward.json after test.sh)."""
        return self.root / inside.lstrip("/")

    @property
    def manifest_path(self) -> str:
        return f"/data/_needle_manifest_{self.name}.json"

    def _lay_out(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="env0-sandbox-", dir="/tmp"))
        self._stack.callback(shutil.rmtree, self.root, ignore_errors=True)
        for d in ("tmp", "data", "logs/verifier", "logs/agent", "logs/artifacts", "tasks", "solution", "tests",
                  "env0/sock"):
            (self.root / d).mkdir(parents=True)
        (self.root / "tmp").chmod(0o1777)
        _shims(self.root / "env0" / "bin")
        if self.package_dir is not None and self.manifest is not None:
            self.host_path(self.manifest_path).write_text(json.dumps(self.manifest, indent=2, default=str))
        if self.mode == "unconfined" and self.package_dir is not None:
            (self.root / "tasks" / self.name).mkdir()
            (self.root / "tasks" / self.name / "data").symlink_to(self.package_dir / "data")

    def _base_env(self, urls: dict[str, str]) -> dict[str, str]:
        bin_dir = "/.env0/bin" if self.mode == "namespaces" else str(self.root / "env0" / "bin")
        env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": self.path("/tmp"),
               "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "TASKS_DIR": self.path("/tasks"),
               "LOGS_DIR": self.path("/logs/verifier"), "SLACK_BOT_TOKEN": "mock-bot-token",
               "SLACK_USER_TOKEN": "mock-user-token", **service_urls(urls)}
        if self.mode == "unconfined":
            env["TMPDIR"] = self.path("/tmp")
        if self.name is not None:
            env.update(TASK_NAME=self.name, TASK_ROOT=self.path(f"/tasks/{self.name}"),
                       NEEDLE_MANIFEST=self.path(self.manifest_path))
        return env

    # -- lifecycle ---------------------------------------------------------------------------------
    def __enter__(self) -> Sandbox:
        try:
            self._lay_out()
            sock_dir = self.root / "env0" / "sock" if self.mode == "namespaces" else None
            urls = self._stack.enter_context(serve_services(self.surface, sock_dir))
            self.env = self._base_env(urls)
            if self.mode == "namespaces":
                self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._proc is not None:
            self._stop()
        self._stack.close()

    def _start(self) -> None:
        binds = [(str(self.root / d), "/" + d, True) for d in ("tmp", "data", "logs")]
        binds += [(str(self.root / d), "/" + d, False) for d in ("solution", "tests")]
        binds.append((str(self.root / "env0"), "/.env0", False))
        binds += [(q, q, False) for q in _host_paths_in_tmp() if not q.startswith(str(self.root))]
        if self.package_dir is not None:
            binds.append((str(self.package_dir / "data"), f"/tasks/{self.name}/data", False))
        else:
            binds.append((str(self.root / "tasks"), "/tasks", False))
        conf = {"newroot": str(self.root / "newroot"), "binds": binds,
                "ports": {s.port: f"/.env0/sock/{s.port}.sock" for s in SERVICES}}
        (self.root / "newroot").mkdir()
        python = getattr(sys, "_base_executable", None) or sys.executable
        argv = ["unshare", "-Urmnpf", "--kill-child", "--", python, "-S", str(_INIT), json.dumps(conf)]
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise SandboxUnavailable(self._why(f"cannot start unshare: {e}")) from None
        ready = select.select([self._proc.stdout], [], [], 30)[0]
        line = self._proc.stdout.readline().decode() if ready else ""
        if line.strip() != "ready":
            self._proc.kill()
            err = self._proc.stderr.read().decode(errors="replace").strip() if ready else "no answer in 30 s"
            self._proc.wait()
            self._proc = None
            raise SandboxUnavailable(self._why((line.strip() + " " + err).strip()))
        threading.Thread(target=self._read_answers, daemon=True, name="env0 sandbox answers").start()

    def _why(self, detail: str) -> str:
        return (f"env0 sandbox: Linux namespaces are not available here ({detail}); it needs util-linux `unshare` "
                f"and unprivileged user namespaces (or root). To run the package's scripts unconfined on the host "
                f"instead (no private /tmp or ports, one script at a time), set {MODE_ENV}=unconfined")

    def _read_answers(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            msg = json.loads(line)
            fut = self._pending.pop(msg.pop("id"), None)
            if fut is not None:
                fut.set_result(msg)
        for fut in list(self._pending.values()):
            if not fut.done():
                fut.set_exception(RuntimeError("env0 sandbox: its first process ended"))

    def _stop(self) -> None:
        assert self._proc is not None
        try:
            self._proc.stdin.close()
            self._proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()
        for f in (self._proc.stdout, self._proc.stderr):
            f.close()
        self._proc = None

    # -- commands ----------------------------------------------------------------------------------
    def run(self, argv: list[str], *, timeout: float, output_cap: int, env: dict[str, str] | None = None,
            cwd: str = "/") -> SandboxResult:
        """Run one command in the sandbox (same namespaces and /tmp as the previous ones); its output is kept up to
        `output_cap` bytes per stream (`truncated` says so), and it is killed with its process group after
        `timeout` seconds (`timed_out`)."""
        full_env = {**self.env, **(env or {})}
        if self.mode == "unconfined":
            return _run_host(argv, timeout, output_cap, full_env, self.path(cwd))
        if self._proc is None:
            raise RuntimeError("env0 sandbox: run() outside its `with` block")
        n = next(self._ids)
        fut: Future = Future()
        self._pending[n] = fut
        req = {"id": n, "argv": list(argv), "env": full_env, "cwd": cwd, "timeout": timeout, "cap": output_cap}
        with self._write:
            self._proc.stdin.write((json.dumps(req) + "\n").encode())
            self._proc.stdin.flush()
        try:
            msg = fut.result(timeout=timeout + 60)
        except TimeoutError:
            self._pending.pop(n, None)
            raise RuntimeError(f"env0 sandbox: no answer {timeout + 60:.0f} s after the command started") from None
        if msg.pop("b64", False):
            import base64
            msg["stdout"], msg["stderr"] = (base64.b64decode(msg[k]).decode("utf-8", "replace") for k in ("stdout", "stderr"))
        return SandboxResult.model_validate(msg)


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
