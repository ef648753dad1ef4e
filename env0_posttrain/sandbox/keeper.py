"""The keeper of an env0 sandbox (standard library only; started by `unshare -n` in a network namespace of its own).

It stays OUTSIDE every command's view: it brings the private loopback up, listens there on env0's ports and pipes
each connection to the service's Unix socket in the parent (the Workspace stays there), prints "ready", then runs
each command the parent sends on stdin (one JSON object a line) through bubblewrap and answers on stdout. The next
command's container is made ahead (Spares), so a command is handed over rather than started.

Each command is its own bwrap container (the argv prefix the parent built): its own user, pid, mount, ipc and uts
namespaces, sharing only this network namespace, so it reaches the services on loopback and nothing else. It sees
none of this process: a fresh /proc of its own pid namespace, no inherited descriptors (close_fds), no capabilities
(a non-root uid, all capabilities dropped), none of the parent's environment. What it prints is read here and cut
at the request's cap, so the parent never reads more than the cap. Hard rlimits set here at start are inherited by
every command and cannot be raised without privileges they lack; each command is born inside the sandbox's cgroups
(when the parent made them), see Spawner.

Before "ready" it also joins a fresh session keyring (so nothing of the runner's keys is even inherited) and, in
the mount namespace `unshare --mount` gave it, puts the sandbox's writable folders (/tmp, /data, /logs) on one
tmpfs of its own with a size and an inode limit: whatever the commands write lives there, counts against those
limits, never touches the host's disk, and is gone with this process. Every container loads the seccomp filter
the parent compiled (sandbox/seccomp.py), handed to bwrap on a pipe per container (`--seccomp FD`).

When stdin closes (or the parent dies) it exits; bwrap's --die-with-parent then ends every command.
"""

from __future__ import annotations

import base64
import ctypes
import fcntl
import json
import os
import queue
import resource
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading

PR_SET_PDEATHSIG = 1
CONN_LIMIT = 32  # connections the forwarders hold at once for this sandbox's commands
UPSTREAM_CAP = 8 << 20  # bytes one connection may send to a service (more ends that connection only)


def loopback_up() -> None:
    """`ip link set lo up` without iproute2: SIOCGIFFLAGS / SIOCSIFFLAGS with IFF_UP."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), 0x8913, req))[1]
        fcntl.ioctl(s.fileno(), 0x8914, struct.pack("16sH14x", b"lo", flags | 1))


_CONNS = threading.BoundedSemaphore(CONN_LIMIT)


def _pump(src: socket.socket, dst: socket.socket, cap: int | None) -> None:
    sent = 0
    try:
        while data := src.recv(65536):
            sent += len(data)
            if cap is not None and sent > cap:
                break
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _forward(conn: socket.socket, sock_path: str) -> None:
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(sock_path)
    except OSError:
        conn.close()
        up.close()
        _CONNS.release()
        return
    back = threading.Thread(target=_pump, args=(up, conn, None), daemon=True)
    back.start()
    _pump(conn, up, UPSTREAM_CAP)
    back.join()
    conn.close()
    up.close()
    _CONNS.release()


def forward(port: int, sock_path: str) -> None:
    """Listen on the private loopback at env0's port; each connection is piped to the service's Unix socket."""
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            lsock = socket.socket(family, socket.SOCK_STREAM)
            lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            lsock.bind((host, port))
            lsock.listen(128)
        except OSError:
            continue  # no IPv6 on this loopback: `localhost` falls back to 127.0.0.1

        def accept(lsock: socket.socket = lsock) -> None:
            while True:
                conn, _ = lsock.accept()
                if not _CONNS.acquire(blocking=False):  # too many at once: this one is refused, the rest go on
                    conn.close()
                    continue
                threading.Thread(target=_forward, args=(conn, sock_path), daemon=True).start()
        threading.Thread(target=accept, daemon=True).start()


def _read_capped(stream, cap: int, out: list) -> None:
    """Read to EOF, keeping the first `cap` bytes; out = [bytes, truncated]."""
    kept, truncated = bytearray(), False
    while chunk := stream.read1(65536):
        if len(kept) + len(chunk) > cap:
            truncated = True
        kept += chunk[:max(cap - len(kept), 0)]
    out[:] = [bytes(kept), truncated]


_ANSWER = threading.Lock()
SECCOMP: list[bytes] = []  # the compiled filter, from the parent
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC = 0x2, 0x4, 0x1000, 0x4000


def _filter_fd() -> int:
    """A pipe holding the seccomp filter for one bwrap (`--seccomp FD`); the caller closes it after the start."""
    r, w = os.pipe()
    try:
        os.write(w, SECCOMP[0])
    finally:
        os.close(w)
    return r


def bwrap_argv(conf: dict, cwd: str, argv: list[str]) -> tuple[list[str], int]:
    """One container's argv and the filter's pipe it reads."""
    fd = _filter_fd()
    return [*conf["bwrap"], "--seccomp", str(fd), "--chdir", cwd, "--", *argv], fd


def fresh_session_keyring(keyctl: int) -> None:
    """Join a new anonymous session keyring: the runner's keys are not inherited (commands cannot call keyctl at
    all: the filter refuses it; this covers the keeper and bwrap too)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(keyctl, 1, None) < 0:  # KEYCTL_JOIN_SESSION_KEYRING, anonymous
        err = ctypes.get_errno()
        if err != 38:  # ENOSYS: a kernel without keyrings has none to share
            raise OSError(err, f"cannot join a fresh session keyring: {os.strerror(err)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype or 'bind'} on {target}: {os.strerror(err)}")


def writable_space(w: dict) -> None:
    """One tmpfs with the sandbox's size and inode limits holding its writable folders: the folders the parent laid
    out (the needle manifest in data/) are copied onto it, then it is bound over them (in this namespace only)."""
    space = os.path.join(w["root"], "env0", "rw")
    os.mkdir(space, 0o755)
    _mount("env0-writable", space, "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={w['bytes']},nr_inodes={w['files']},mode=0755")
    for d in w["dirs"]:
        host = os.path.join(w["root"], d)
        shutil.copytree(host, os.path.join(space, d), symlinks=True)
        _mount(os.path.join(space, d), host, None, MS_BIND | MS_REC, None)


def _write_ids(files: list[str], ident: int) -> None:
    """Write a pid or thread id into cgroup files (os calls only: also runs in a child between fork and exec)."""
    me = str(ident).encode()
    for path in files:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, me)
        finally:
            os.close(fd)


class Spawner:
    """Starts every command inside the sandbox's cgroups, so nothing a command forks is ever outside them.

    With cgroup v1 one thread of this process is moved into them once (their `tasks` files) and forks every command:
    each is born inside, where moving a process per command would cost milliseconds. Only that thread is in them, so
    a command that fills the process limit stops new commands until it ends, never the forwarders. Elsewhere (v2
    moves whole processes only) each command joins between fork and exec. The kernel picks the process to kill at
    the memory limit among those whose first thread is in the cgroup: never this one."""

    def __init__(self, tasks_files: list[str], procs_files: list[str]):
        self.procs_files = procs_files if not tasks_files else []
        self.jobs: queue.SimpleQueue | None = None
        if tasks_files:
            self.jobs = queue.SimpleQueue()
            ready: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=self._loop, args=(tasks_files, ready), daemon=True, name="spawner").start()
            failed = ready.get()
            if failed is not None:
                raise failed

    def _loop(self, tasks_files: list[str], ready: queue.SimpleQueue) -> None:
        try:
            _write_ids(tasks_files, threading.get_native_id())
        except OSError as e:
            ready.put(e)
            return
        ready.put(None)
        assert self.jobs is not None
        while True:
            argv, kw, box, done = self.jobs.get()
            try:
                box.append(subprocess.Popen(argv, **kw))
            except Exception as e:  # noqa: BLE001 - handed to the caller; this thread serves the next command
                box.append(e)
            done.set()

    def popen(self, argv: list[str], **kw) -> subprocess.Popen:
        if self.jobs is None:
            files = self.procs_files
            return subprocess.Popen(argv, preexec_fn=(lambda: _write_ids(files, os.getpid())) if files else None, **kw)
        box: list = []
        done = threading.Event()
        self.jobs.put((argv, kw, box, done))
        done.wait()
        if isinstance(box[0], Exception):
            raise box[0]
        return box[0]


SPAWNER: list[Spawner] = []


class Spares:
    """One container made ahead: the next command's bwrap container, started (in the sandbox's cgroups, like every
    command) while the current command runs or the agent thinks, so a request only hands the command over.

    A spare's command under bwrap is `sh -s`, reading one script on its stdin, a pipe whose other end only this process
    holds: it sets stdin to /dev/null, changes to the request's folder and execs the command through `env -i` with
    the request's environment, so the command holds nothing of the channel. One spare serves one command (taken,
    then the next one is started); spares are started by one long-lived thread, since bwrap's --die-with-parent
    follows the thread that forked it, and die with this process like every command."""

    def __init__(self, conf: dict):
        self.conf = conf
        self.ready: subprocess.Popen | None = None
        self.making = False
        self.cond = threading.Condition()
        self.want = threading.Event()
        threading.Thread(target=self._loop, daemon=True, name="spares").start()

    def _loop(self) -> None:
        while True:
            self.want.wait()
            self.want.clear()
            argv, fd = bwrap_argv(self.conf, "/", [SHELL, "-s"])
            try:
                proc = SPAWNER[0].popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env={}, close_fds=True, pass_fds=(fd,), start_new_session=True)
            except Exception:  # noqa: BLE001 - e.g. the process limit reached: the next command starts its own
                proc = None
            finally:
                os.close(fd)
            with self.cond:
                self.ready, self.making = proc, False
                self.cond.notify_all()

    def refill(self) -> None:
        with self.cond:
            if self.ready is None and not self.making:
                self.making = True
                self.want.set()

    def take(self) -> subprocess.Popen | None:
        """The spare (None if there is none or it has ended); the next one is being started on return."""
        with self.cond:
            self.cond.wait_for(lambda: not self.making, timeout=10)  # a Popen under way: milliseconds
            proc, self.ready = (None, self.ready) if self.making else (self.ready, None)
        self.refill()
        if proc is not None and proc.poll() is not None:
            _close(proc)
            return None
        return proc


SPARES: list[Spares] = []
SHELL, ENV = "/bin/sh", "/usr/bin/env"


def handover_script(req: dict) -> bytes | None:
    """What a spare's shell runs for `req`, or None where only a fresh container keeps its exact meaning (a name
    `env` would read as an assignment, a NUL, a relative folder): then the command starts as bwrap's own."""
    argv, env, cwd = req["argv"], req["env"], req["cwd"]
    if not argv or "=" in argv[0] or not cwd.startswith("/") or any(not k or "=" in k for k in env):
        return None
    words = " ".join(shlex.quote(w) for w in [*(f"{k}={v}" for k, v in env.items()), *argv])
    text = f"exec </dev/null && {{ cd -P -- {shlex.quote(cwd)} || exit 1; }} && exec {ENV} -i -- {words}\n"
    if "\0" in text:
        return None
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None


def _close(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    for f in (proc.stdin, proc.stdout, proc.stderr):
        try:
            f.close()
        except OSError:
            pass


def _handed_over(proc: subprocess.Popen, script: bytes) -> bool:
    try:
        proc.stdin.write(script)
        proc.stdin.close()
        return True
    except OSError:  # the spare ended before it read (e.g. killed at the memory limit): a fresh container instead
        _close(proc)
        return False


def _exec_error(err: bytes, prefix: bytes) -> bytes | None:
    """`bwrap: execvp NAME: why` or `/usr/bin/env: 'NAME': why` -> `NAME: why` (the command was not found or not
    executable); None for anything else."""
    if not err.startswith(prefix):
        return None
    rest = err[len(prefix):]
    if prefix.endswith(b"'"):
        name, sep, why = rest.partition(b"': ")
        return name + b": " + why if sep else None
    return rest


def run_one(conf: dict, req: dict) -> None:
    out, err = [b"", False], [b"", False]
    answer = {"id": req["id"], "returncode": 127, "timed_out": False, "truncated": False}
    script = handover_script(req)
    proc = SPARES[0].take() if SPARES and script is not None else None
    spare = proc is not None and _handed_over(proc, script)
    if not spare:
        argv, fd = bwrap_argv(conf, req["cwd"], req["argv"])
        try:
            proc = SPAWNER[0].popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=req["env"], close_fds=True, pass_fds=(fd,), start_new_session=True)
        except Exception as e:  # noqa: BLE001 - e.g. the process limit reached by another command: this one fails
            proc = None
            err[0] = f"bwrap: {getattr(e, 'strerror', None) or e}\n".encode()
        finally:
            os.close(fd)
    if proc is not None:
        readers = [threading.Thread(target=_read_capped, args=(s, req["cap"], o), daemon=True)
                   for s, o in ((proc.stdout, out), (proc.stderr, err))]
        for r in readers:
            r.start()

        def kill() -> None:  # a timer, not wait(timeout): Popen polls then, adding up to 50 ms per command
            if proc.returncode is not None:
                return
            answer["timed_out"] = True
            try:  # bwrap's outer process; its pid 1 inside dies with it (--die-with-parent), and the namespace too
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(req["timeout"], kill)
        timer.start()
        proc.wait()
        timer.cancel()
        for r in readers:  # every process of the command is gone with its pid namespace: the pipes are at EOF
            r.join(5)
        rc = proc.returncode
        if spare:
            named = _exec_error(err[0], f"{ENV}: '".encode()) if rc in (126, 127) else None
        else:
            named = _exec_error(err[0], b"bwrap: execvp ") if rc == 1 else None
            if named is not None:
                rc = 126 if b"Permission denied" in err[0] else 127
        if named is not None:  # the command itself was not found / not executable
            err[0] = named
        answer.update(returncode=rc, truncated=bool(out[1] or err[1]))
    answer.update(stdout=base64.b64encode(out[0]).decode(), stderr=base64.b64encode(err[0]).decode())
    with _ANSWER:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def serve(conf: dict) -> None:
    for port, sock_path in conf["ports"].items():
        forward(int(port), sock_path)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    if os.access(SHELL, os.X_OK) and os.access(ENV, os.X_OK):
        SPARES.append(Spares(conf))
        SPARES[0].refill()
    for line in sys.stdin:
        threading.Thread(target=run_one, args=(conf, json.loads(line)), daemon=True).start()


def main() -> int:
    conf = json.loads(sys.argv[1])
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the parent gone, this sandbox goes too
    for name, value in conf["rlimits"].items():  # hard: a command without privileges cannot raise them
        resource.setrlimit(getattr(resource, name), (value, value))
    SECCOMP.append(base64.b64decode(conf["seccomp"]))
    try:
        fresh_session_keyring(conf["keyctl"])
        writable_space(conf["writable"])
        loopback_up()
        SPAWNER.append(Spawner(conf["cgroup_tasks"], conf["cgroup_procs"]))
    except OSError as e:
        sys.stdout.write(f"error: {e}\n")
        sys.stdout.flush()
        return 1
    serve(conf)
    os._exit(0)  # stdin closed: the sandbox ends now (its commands die with this process); nothing to clean up


if __name__ == "__main__":
    sys.exit(main())
