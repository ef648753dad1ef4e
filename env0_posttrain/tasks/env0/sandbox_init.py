"""The first process of an env0 sandbox (standard library only; run by `unshare -Urmnpf` as the namespaces' pid 1).

It builds env0's container layout as the new root (the host's directories bound read-only, the sandbox's own
/tmp, /data, /logs and /tasks/<name> writable or bound from the package), brings the private loopback up, forwards
each env0 port on it to the service's Unix socket in the parent (the Workspace stays there), prints "ready", then
runs the commands the parent sends on stdin (one JSON object a line) and answers each on stdout. When stdin closes
it exits, and the kernel ends every process of the sandbox with it (pid namespace).
"""

from __future__ import annotations

import asyncio
import base64
import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import sys

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


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass


def forwarder(sock_path: str):
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(sock_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        for w in (writer, up_writer):
            w.close()
    return handle


async def _read_capped(stream: asyncio.StreamReader, cap: int, out: list) -> None:
    """Read to EOF, keeping the first `cap` bytes; out = [bytes, truncated]."""
    kept, truncated = bytearray(), False
    while chunk := await stream.read(65536):
        room = cap - len(kept)
        if len(chunk) > room:
            truncated = True
        kept += chunk[:max(room, 0)]
        out[:] = [bytes(kept), truncated]
    out[:] = [bytes(kept), truncated]


async def run_one(req: dict) -> dict:
    out, err = [b"", False], [b"", False]
    try:
        proc = await asyncio.create_subprocess_exec(*req["argv"], stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    env=req["env"], cwd=req["cwd"], start_new_session=True)
    except OSError as e:
        return {"id": req["id"], "returncode": 127, "stdout": "", "stderr": f"{req['argv'][0]}: {e.strerror}\n",
                "timed_out": False, "truncated": False}
    readers = [asyncio.ensure_future(_read_capped(proc.stdout, req["cap"], out)),
               asyncio.ensure_future(_read_capped(proc.stderr, req["cap"], err))]
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), req["timeout"])
    except asyncio.TimeoutError:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
    # what the command wrote is in the pipes already; a background job that keeps them open is not waited for
    await asyncio.wait(readers, timeout=0.2)
    for r in readers:
        r.cancel()
    return {"id": req["id"], "returncode": proc.returncode, "timed_out": timed_out,
            "stdout": base64.b64encode(out[0]).decode(), "stderr": base64.b64encode(err[0]).decode(),
            "truncated": bool(out[1] or err[1]), "b64": True}


async def serve(conf: dict) -> None:
    loop = asyncio.get_running_loop()
    for port, sock_path in conf["ports"].items():
        await asyncio.start_server(forwarder(sock_path), "127.0.0.1", int(port))
        try:
            await asyncio.start_server(forwarder(sock_path), "::1", int(port))
        except OSError:
            pass  # no IPv6 on this loopback: `localhost` falls back to 127.0.0.1
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout

    def answer(task: asyncio.Task) -> None:
        out.write(json.dumps(task.result()) + "\n")
        out.flush()

    out.write("ready\n")
    out.flush()
    pending = set()
    while line := await reader.readline():
        task = asyncio.ensure_future(run_one(json.loads(line)))
        pending.add(task)
        task.add_done_callback(pending.discard)
        task.add_done_callback(answer)


def main() -> int:
    conf = json.loads(sys.argv[1])
    try:
        build_root(conf)
        loopback_up()
    except OSError as e:
        sys.stdout.write(f"error: {e}\n")
        sys.stdout.flush()
        return 1
    asyncio.run(serve(conf))
    return 0


if __name__ == "__main__":
    sys.exit(main())
