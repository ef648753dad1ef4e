"""The first process of an env0 sandbox (standard library only; run by `unshare -Urmnpf` as the namespaces' pid 1).

It builds env0's container layout as the new root (the host's directories bound read-only, the sandbox's own
/tmp, /data, /logs and /tasks/<name> writable or bound from the package), brings the private loopback up, forwards
each env0 port on it to the service's Unix socket in the parent (the Workspace stays there), prints "ready", then
runs the commands the parent sends on stdin (one JSON object a line) and answers each on stdout. When stdin closes
it exits, and the kernel ends every process of the sandbox with it (pid namespace).
"""

from __future__ import annotations

import base64
import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC = 1, 2, 4, 8, 32, 4096, 16384
MNT_DETACH, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 2, 0x8000, 1
SYS_PIVOT_ROOT, SYS_MOUNT_SETATTR = 155, 442  # x86_64 / generic numbers (mount_setattr: Linux >= 5.12)
_libc = ctypes.CDLL(None, use_errno=True)
# the layout's own top-level entries; everything else at the host's top level is bound read-only
OWN = {"tmp", "data", "logs", "tasks", "proc", "dev", ".env0"}


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None
    _check(_libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def read_only(target: str, recursive: bool = True) -> None:
    """mount_setattr(MOUNT_ATTR_RDONLY), recursively: every submount of a bound host directory turns read-only."""
    attr = struct.pack("QQQQ", MOUNT_ATTR_RDONLY, 0, 0, 0)
    buf = ctypes.create_string_buffer(attr, len(attr))
    rc = _libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(-100), target.encode(),
                       ctypes.c_uint(AT_RECURSIVE if recursive else 0), buf, ctypes.c_size_t(len(attr)))
    _check(rc, f"read-only {target}")


def bind(src: str, target: str, writable: bool) -> None:
    if os.path.isdir(src):
        os.makedirs(target, exist_ok=True)
    else:
        open(target, "a").close()
    mount(src, target, None, MS_BIND | MS_REC)
    if not writable:
        read_only(target)


def build_root(conf: dict) -> None:
    new = conf["newroot"]
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")
    for name in sorted(os.listdir("/")):
        src, dst = "/" + name, os.path.join(new, name)
        if name in OWN:
            continue
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isdir(src) or os.path.isfile(src):
            bind(src, dst, writable=False)
    bind("/dev", new + "/dev", writable=False)  # device nodes stay usable on a read-only mount
    mount("tmpfs", new + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    os.makedirs(new + "/proc")
    try:  # our own pid namespace's /proc; a host that masks parts of its /proc refuses that, then bind it
        mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        bind("/proc", new + "/proc", writable=False)
    for src, dst, writable in conf["binds"]:
        bind(src, new + dst, writable)
    os.chdir(new)
    _check(_libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detach the host root")
    os.chdir("/")
    read_only("/", recursive=False)


def loopback_up() -> None:
    """`ip link set lo up` without iproute2: SIOCGIFFLAGS / SIOCSIFFLAGS with IFF_UP."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), 0x8913, req))[1]
        fcntl.ioctl(s.fileno(), 0x8914, struct.pack("16sH14x", b"lo", flags | 1))


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
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
        return
    back = threading.Thread(target=_pump, args=(up, conn), daemon=True)
    back.start()
    _pump(conn, up)
    back.join()
    conn.close()
    up.close()


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
RUNNING: set[int] = set()  # the commands Popen is waiting for
_SPAWN = threading.Lock()  # a command enters RUNNING before any reaper can see it exit (else its status is lost)


def reap_orphans() -> None:
    """pid 1's duty: reap the zombies commands left behind (a killed command's children are reparented here, and
    Popen waits only for the commands themselves); each would hold a pid until the sandbox ends."""
    with _SPAWN:
        _reap()


def _reap() -> None:
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in RUNNING:
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
            if state == "Z" and ppid == "1":
                os.waitpid(int(entry), os.WNOHANG)
        except (OSError, ValueError):
            pass


def run_one(req: dict) -> None:
    out, err = [b"", False], [b"", False]
    answer = {"id": req["id"], "returncode": 127, "timed_out": False, "truncated": False, "b64": True}
    try:
        with _SPAWN:
            proc = subprocess.Popen(req["argv"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=req["env"], cwd=req["cwd"], start_new_session=True)
            RUNNING.add(proc.pid)
    except OSError as e:
        err[0] = f"{req['argv'][0] if req['argv'] else ''}: {e.strerror}\n".encode()
    else:
        readers = [threading.Thread(target=_read_capped, args=(s, req["cap"], o), daemon=True)
                   for s, o in ((proc.stdout, out), (proc.stderr, err))]
        for r in readers:
            r.start()
        def kill() -> None:  # a timer, not wait(timeout): Popen polls then, adding up to 50 ms per command
            if proc.returncode is not None:
                return
            answer["timed_out"] = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(req["timeout"], kill)
        timer.start()
        proc.wait()
        timer.cancel()
        for r in readers:  # what the command wrote is in the pipes; a background job holding them is not waited for
            r.join(0.2)
        answer.update(returncode=proc.returncode, truncated=bool(out[1] or err[1]))
        RUNNING.discard(proc.pid)
        reap_orphans()
    answer.update(stdout=base64.b64encode(out[0]).decode(), stderr=base64.b64encode(err[0]).decode())
    with _ANSWER:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def serve(conf: dict) -> None:
    for port, sock_path in conf["ports"].items():
        forward(int(port), sock_path)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        threading.Thread(target=run_one, args=(json.loads(line),), daemon=True).start()


def main() -> int:
    conf = json.loads(sys.argv[1])
    try:
        build_root(conf)
        loopback_up()
    except OSError as e:
        sys.stdout.write(f"error: {e}\n")
        sys.stdout.flush()
        return 1
    serve(conf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
