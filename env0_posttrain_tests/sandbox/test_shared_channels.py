"""No way out of the sandbox around its namespaces and no channel between concurrent sandboxes, through both doors
(a package's scripts, an agent's shell commands): socket families other than AF_UNIX, AF_INET and AF_INET6 are
refused (vsock reaches a VM's host around the private loopback), inotify, fanotify, dnotify and leases are refused,
and a lock on a shared file is seen by nobody (the host's lock is not seen inside either). The next command answers
and a round of two concurrent episodes goes on, counted."""

from __future__ import annotations

import fcntl
import json

import pytest

from env0_posttrain_tests.sandbox.test_attacks import (  # noqa: F401 - pytestmark: skipped where nothing is confined
    DOORS,
    attack,
    corpus,  # noqa: F811 - the fixture
    package_round,
    pytestmark,
    shell_round,
)

PROBE = """python3 - <<'PY'
import ctypes, errno, fcntl, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
NR = {numbers}
def call(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(NR[nr], *args)
    e = ctypes.get_errno()
    if r > 2:
        os.close(r)
    return "RAN" if r >= 0 else "REFUSED " + errno.errorcode.get(e, str(e))
def py(f):
    try:
        f()
        return "RAN"
    except OSError as e:
        return "REFUSED " + errno.errorcode.get(e.errno, str(e.errno))
out = {{}}
for name, family, kind in [("unix", 1, 1), ("inet", 2, 2), ("inet6", 10, 2), ("unspec", 0, 1), ("netlink", 16, 3),
                           ("packet", 17, 3), ("alg", 38, 5), ("vsock", 40, 1), ("bluetooth", 31, 3), ("xdp", 44, 3)]:
    out["socket/" + name] = call("socket", family, kind, 0)
out["socket/vsock-high"] = call("socket", ctypes.c_long((1 << 32) | 40), 1, 0)
out["socket/unix-high"] = call("socket", ctypes.c_long((1 << 32) | 1), 1, 0)
pair = (ctypes.c_int * 2)()
out["socketpair/unix"] = call("socketpair", 1, 1, 0, pair)
out["socketpair/vsock"] = call("socketpair", 40, 1, 0, pair)
out["inotify_init1"] = call("inotify_init1", 0)
out["fanotify_init"] = call("fanotify_init", 0, 0)
fd = os.open("/usr/bin/bash", os.O_RDONLY)
out["dnotify"] = py(lambda: fcntl.fcntl(os.open("/usr/bin", os.O_RDONLY), 1026, 1))
out["lease"] = py(lambda: fcntl.fcntl(fd, 1024, 0))
out["flock"] = py(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))  # the host holds LOCK_EX on it
out["lockf"] = py(lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
out["ofd-lock"] = py(lambda: fcntl.fcntl(fd, 37, struct.pack("hhqqi", 0, 0, 0, 0, 0)))
out["lock-high"] = call("fcntl", fd, ctypes.c_long((1 << 32) | 6), ctypes.c_char_p(struct.pack("hhqqi", 0, 0, 0, 0, 0)))
ino = os.stat("/usr/bin/bash").st_ino
out["locks-listed"] = str(sum(f":{{ino}} " in line for line in open("/proc/locks")))
out["resolver"] = py(lambda: socket.getaddrinfo("localhost", 9001, flags=socket.AI_ADDRCONFIG))
import json; print("PROBE", json.dumps(out), flush=True)
PY"""

EXPECTED = {
    "socket/unix": "RAN", "socket/inet": "RAN", "socket/inet6": "RAN",
    **{f"socket/{n}": "REFUSED EAFNOSUPPORT" for n in ("unspec", "netlink", "packet", "alg", "vsock", "bluetooth",
                                                        "xdp", "vsock-high", "unix-high")},
    "socketpair/unix": "RAN", "socketpair/vsock": "REFUSED EAFNOSUPPORT",
    "inotify_init1": "REFUSED EPERM", "fanotify_init": "REFUSED EPERM", "dnotify": "REFUSED EPERM",
    "lease": "REFUSED EPERM",
    "flock": "RAN", "lockf": "RAN", "ofd-lock": "RAN", "lock-high": "RAN",  # no lock taken, none seen
    "locks-listed": "0", "resolver": "RAN",
}


def _numbers() -> dict[str, int]:
    import pyseccomp as sc

    return {n: int(sc.resolve_syscall(sc.system_arch(), n))
            for n in ("socket", "socketpair", "inotify_init1", "fanotify_init", "fcntl")}


def _probed(text: str) -> list[dict[str, str]]:
    return [json.loads(line.split(" ", 1)[1]) for line in text.splitlines() if line.startswith("PROBE ")]


@pytest.mark.parametrize("door", DOORS)
def test_socket_families_notifications_and_locks_are_confined(door, tmp_path, corpus):  # noqa: F811
    """Each refused call is refused by the filter (on the unfiltered kernel netlink and inotify run, a host lock
    blocks flock and the sandbox's own lock is listed in /proc/locks); the family is read as all 64 bits."""
    from env0_posttrain.tasks import generate_tasks

    script = PROBE.format(numbers=json.dumps(_numbers()))
    with open("/usr/bin/bash", "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a lock a sandbox must not see (another sandbox's, were it possible)
        out, then = attack(door, script, tmp_path, generate_tasks(0, per_template=1)[0], after="echo next-answered")
    assert _probed(out) == [EXPECTED], out
    assert then.startswith("next-answered")
    eps = shell_round(script) if door == "shell" else package_round(corpus, script)  # two episodes at once, counted
    seen = [m["content"] for e in eps for m in e.messages if m["role"] == "tool"][::2] if door == "shell" else \
        [json.loads(e.verifier.detail)["after"] for e in eps if e.task_id.startswith("env0-hostile")]  # test.sh's
    assert seen and all(_probed(s) == [EXPECTED] for s in seen), seen
