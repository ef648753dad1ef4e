"""What a command in an env0 sandbox sees: bubblewrap's argv for one container, its allowlist root and its /etc.

The root holds only what a task needs (nothing else of the host): /usr (and the /bin, /sbin, /lib* links or
folders of the host's layout), an /etc of our own (users, hosts, name service) plus the host's dynamic-linker
cache and `alternatives` links, the Python interpreters the shims run (the prefixes they report: a pyenv build,
a venv anywhere, /tmp included), a fresh /proc and a minimal /dev, and env0's layout from the sandbox's folder:
/tmp, /data, /logs writable; /solution, /tests, /tasks/<name>/data and /.env0/bin read-only; the /proc files that
show host-wide kernel state whatever the namespace (the keyrings in /proc/keys, ...) covered by /dev/null. Every mount is
read-only except those three, the command's uid is 1000 (not root) in a user namespace of its own with every
capability dropped, and nested user namespaces are refused where bwrap can (--disable-userns).

Also here: whether such a container can be made on this machine (`containment_problem`, checked once per
process, the seccomp filter included), the shims and the interpreters they need, and the walk the runner uses to read back a file a command
may have planted links around (`open_dir_inside`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..workspace.services import registry
from .gws import SERVICES_FILE
from .seccomp import filter_fd, seccomp_problem

_GWS = Path(__file__).with_name("gws.py")
UID = 1000
TOP = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")  # the host's own layout of these (links or folders)
MASKED_PROC = ("keys", "key-users", "kcore", "timer_list", "sched_debug", "latency_stats")  # host-wide, not namespaced
HOST_ETC = ("ld.so.cache", "alternatives")  # bound from the host at each command: dynamic linking, Debian's links
ETC_LINKS = ("localtime", "os-release")  # copied as the links they are (their targets are under /usr)
ETC_FILES = ("debian_version", "protocols", "services")  # small, harmless, read by the odd tool
PASSWD = f"root:x:0:0:root:/root:/usr/sbin/nologin\nenv0:x:{UID}:{UID}:env0:/tmp:/bin/bash\n" \
         "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
GROUP = f"root:x:0:\nenv0:x:{UID}:\nnogroup:x:65534:\n"
HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
NSSWITCH = "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\n" \
           "services: files\n"


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap", "/bin/bwrap") if os.access(p, os.X_OK)), None)


@functools.lru_cache(maxsize=1)
def _supports_disable_userns(bwrap: str) -> bool:
    try:
        return "--disable-userns" in subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False


def make_etc(dst: Path) -> None:
    """The sandbox's /etc: our users, hosts and name service, a few harmless host files; mount points for HOST_ETC."""
    dst.mkdir()
    for name, text in (("passwd", PASSWD), ("group", GROUP), ("hosts", HOSTS), ("hostname", "env0\n"),
                       ("nsswitch.conf", NSSWITCH)):
        (dst / name).write_text(text)
    for name in ETC_LINKS:
        if os.path.islink(f"/etc/{name}"):
            os.symlink(os.readlink(f"/etc/{name}"), dst / name)
    for name in ETC_FILES:
        if os.path.isfile(f"/etc/{name}") and not os.path.islink(f"/etc/{name}"):
            shutil.copyfile(f"/etc/{name}", dst / name)
    for name in HOST_ETC:
        if os.path.isdir(f"/etc/{name}"):
            (dst / name).mkdir()
        elif os.path.isfile(f"/etc/{name}"):
            (dst / name).touch()


@functools.lru_cache(maxsize=16)
def _prefixes_of(python: str, mtime: float) -> tuple[str, ...]:
    code = "import sys, json; print(json.dumps([sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]))"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
        found = json.loads(out.stdout) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        found = None
    if not isinstance(found, list):
        raise ValueError(f"{python}: cannot run it to find its prefix")
    return tuple(str(x) for x in found)


def interpreter_paths(python: str) -> list[str]:
    """Host folders an interpreter needs: its own folder (a link's too), its prefixes (a venv's pyvenv.cfg and lib/,
    the base installation it points at), each resolved."""
    real = os.path.realpath(python)
    paths = {os.path.dirname(os.path.abspath(python)), os.path.dirname(real),
             *_prefixes_of(python, os.stat(real).st_mtime)}
    return sorted({os.path.realpath(p) for p in paths} | paths)


def outermost(paths: set[str]) -> list[str]:
    """The paths not already inside another one (or inside /usr, bound whole); binds are recursive."""
    keep = {p.rstrip("/") or "/" for p in paths if os.path.isdir(p)}
    keep = {p for p in keep if not (p == "/usr" or p.startswith("/usr/"))}
    return sorted(p for p in keep if p != "/" and not any(p != o and p.startswith(o + "/") for o in keep))


def bwrap_argv(bwrap: str, root: Path, *, package_data: Path | None, task_name: str | None,
               extra_ro: list[str]) -> list[str]:
    """The argv prefix of every command of one sandbox (the keeper adds --chdir DIR -- ARGV)."""
    a = [bwrap, "--unshare-all", "--share-net", "--unshare-user", "--uid", str(UID), "--gid", str(UID),
         "--hostname", "env0", "--cap-drop", "ALL", "--new-session", "--die-with-parent"]
    if _supports_disable_userns(bwrap):
        a.append("--disable-userns")
    for name in TOP:
        src = f"/{name}"
        if os.path.islink(src):
            a += ["--symlink", os.readlink(src), src]
        elif os.path.isdir(src):
            a += ["--ro-bind", src, src]
    a += ["--ro-bind", str(root / "env0" / "etc"), "/etc"]
    for name in HOST_ETC:
        if os.path.exists(f"/etc/{name}"):
            a += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    # bwrap covers /proc/sys only where its user cannot write there; a runner that is root outside is the owner of
    # every sysctl (uid 0 without capabilities may write them), so it is covered read-only here in every case
    a += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev"]
    for name in MASKED_PROC:  # files of a fresh /proc that still show the host's kernel state: covered, as Docker does
        if os.path.exists(f"/proc/{name}"):
            a += ["--dev-bind", "/dev/null", f"/proc/{name}"]  # reads as empty (a nodev bind would refuse)
    for d in ("tmp", "data", "logs"):
        a += ["--bind", str(root / d), f"/{d}"]
    for d in ("solution", "tests"):
        a += ["--ro-bind", str(root / d), f"/{d}"]
    a += ["--ro-bind", str(root / "env0" / "bin"), "/.env0/bin"]
    if package_data is not None and task_name is not None:
        a += ["--ro-bind", str(package_data), f"/tasks/{task_name}/data"]
    else:
        a += ["--ro-bind", str(root / "tasks"), "/tasks"]
    for p in outermost(set(extra_ro)):  # after /tmp: an interpreter under /tmp is bound over the sandbox's own
        a += ["--ro-bind", p, p]
    a += ["--remount-ro", "/"]
    return a


class InterpreterError(ValueError):
    """ENV0_PACKAGE_PYTHON names an interpreter that cannot be run to find its prefixes."""


def base_python() -> str:
    return getattr(sys, "_base_executable", None) or sys.executable


@functools.lru_cache(maxsize=1)
def _probe(bwrap: str) -> str | None:
    """None when a bwrap container with the sandbox's own flags runs here (checked once per process), else why not."""
    with tempfile.TemporaryDirectory(prefix="env0-sandbox-probe-") as tmp:
        root = Path(tmp)
        for d in ("tmp", "data", "logs", "solution", "tests", "tasks", "env0/bin"):
            (root / d).mkdir(parents=True)
        make_etc(root / "env0" / "etc")
        fd = filter_fd()
        argv = [*bwrap_argv(bwrap, root, package_data=None, task_name=None, extra_ro=[]), "--seccomp", str(fd), "--",
                "/bin/sh", "-c", "echo ok"]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"},
                                 pass_fds=(fd,))
        except (OSError, subprocess.SubprocessError) as e:
            return f"{bwrap}: {e}"
        finally:
            os.close(fd)
        if out.returncode != 0 or out.stdout.strip() != "ok":
            return f"bwrap refused: {(out.stderr or out.stdout).strip()[:300]}"
    return None


def keeper_unshare() -> list[str]:
    """How the keeper is started: a network and a mount namespace of its own (a user namespace too, mapping this
    uid to root in it, when this process is not root: mounting its tmpfs needs one)."""
    return ["unshare", "--net", "--mount"] if os.geteuid() == 0 else ["unshare", "--map-root-user", "--net", "--mount"]


@functools.lru_cache(maxsize=1)
def _probe_keeper() -> str | None:
    """None when the keeper's namespaces can be made and a size-limited tmpfs mounted in them (checked once)."""
    with tempfile.TemporaryDirectory(prefix="env0-sandbox-probe-") as tmp:
        script = f"mount -t tmpfs -o size=1m,nr_inodes=64 env0-probe {tmp} && echo ok"
        try:
            out = subprocess.run([*keeper_unshare(), "--", "/bin/sh", "-c", script], capture_output=True, text=True,
                                 timeout=30, env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"})
        except (OSError, subprocess.SubprocessError) as e:
            return f"unshare: {e}"
    if out.returncode != 0 or out.stdout.strip() != "ok":
        return f"cannot mount the keeper's tmpfs: {(out.stderr or out.stdout).strip()[:300]}"
    return None


def containment_problem() -> str | None:
    """None when confined sandboxes can be made on this machine, else why not (tests skip with it)."""
    bwrap = bwrap_path()
    if bwrap is None:
        return "bubblewrap (`bwrap`) is not installed"
    if shutil.which("unshare") is None:
        return "util-linux `unshare` is not installed"
    return seccomp_problem() or _probe(bwrap) or _probe_keeper()


def shims(bin_dir: Path, seen_as: str) -> None:
    """`gws` (our shim) and `python3` first on PATH. env0 packages' `python3` steps use the standard library only:
    the base interpreter with -S starts in a third of the venv's time (no .pth files); a solve.sh makes ~100 such
    calls. ENV0_PACKAGE_PYTHON names another interpreter (run as is). gws.py is copied in: the checkout stays out."""
    bin_dir.mkdir(parents=True)
    base = base_python()
    pkg_python = os.environ.get("ENV0_PACKAGE_PYTHON")
    shutil.copyfile(_GWS, bin_dir / "gws.py")
    (bin_dir / SERVICES_FILE).write_text(json.dumps(gws_url_vars()))
    for name, body in (("gws", f'exec "{base}" -S "{seen_as}/gws.py" "$@"'),
                       ("python3", f'exec "{pkg_python}" "$@"' if pkg_python else f'exec "{base}" -S "$@"')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)


def gws_url_vars() -> dict[str, str]:
    """gws's service table: each service env0 reaches through `gws`, and the variable its scripts set to its URL."""
    return {s.name: s.env0.env[0] for s in registry.SERVICES if s.env0 and s.env0.gws}


def interpreters() -> list[str]:
    """The host folders the shims' interpreters need inside the sandbox."""
    paths = {os.path.dirname(os.path.realpath(base_python())), os.path.realpath(sys.base_prefix),
             os.path.realpath(sys.base_exec_prefix)}
    pkg_python = os.environ.get("ENV0_PACKAGE_PYTHON")
    if pkg_python:
        try:
            paths.update(interpreter_paths(pkg_python))
        except (OSError, ValueError) as e:
            raise InterpreterError(f"ENV0_PACKAGE_PYTHON={pkg_python!r}: {e}") from None
    return sorted(paths)


def open_dir_inside(root: Path, inside: str) -> tuple[int, str]:
    """(an fd of the folder holding `inside`, its last name), walking from `root` without following any link: a
    command may have replaced any folder of its layout by a link to a host path."""
    parts = [p for p in inside.strip("/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"{inside!r}: not a path inside the sandbox")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for p in parts[:-1]:
            nxt = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]
