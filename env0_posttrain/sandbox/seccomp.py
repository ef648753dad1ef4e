"""The system calls no sandboxed command may make: a seccomp filter every command's container loads (bubblewrap's
`--seccomp FD`), compiled once per process with libseccomp (through `pyseccomp`, ctypes over the system's
libseccomp.so.2), never written by hand.

What it refuses (EPERM), as Docker's default profile does: the kernel keyrings (add_key, request_key, keyctl: they
are not namespaced, so a key would be a channel to the runner's session keyring or between sandboxes), loading
modules and kexec, mounting, namespaces (unshare, setns, clone with a CLONE_NEW* flag), the clock, swap, reboot,
accounting and quotas, BPF and perf events, userfaultfd, io_uring, NUMA policy, handle-based opens, tracing other
processes (ptrace, process_vm_*: Docker allows these from kernel 4.8 on; nothing a task runs needs them) and the
rest of BLOCKED below. clone3 answers ENOSYS, as under Docker, so the C library falls back to clone, whose
flags the filter can read. A system call of another ABI (32-bit calls from a 64-bit process) kills the calling
thread (libseccomp's default for an architecture the filter does not name).
`personality` stays allowed (Docker allows its common values; it changes only the caller's own execution domain).
A denylist, where Docker's profile is an allowlist: a system call newer than this list is allowed here.

Socket families are an allowlist: socket and socketpair take AF_UNIX, AF_INET and AF_INET6 (all env0's scripts and
the shell's tools use: glibc's resolver and curl fall back without netlink) and answer EAFNOSUPPORT to every other
family: AF_VSOCK belongs to no network namespace (on a VM it reaches the hypervisor around the private loopback),
packet, netlink, crypto (AF_ALG), bluetooth and the rest reach kernel state or devices no task needs. The family is
compared as all 64 bits, so a value whose low 32 bits name an allowed family but whose high bits are set is refused.

Nothing a sandbox does to a file it shares with another sandbox (the read-only binds of /usr, the interpreter, the
package) can be seen there: inotify and fanotify are refused (EPERM), and so is fcntl's F_NOTIFY (dnotify) and
F_SETLEASE; a lock (flock, fcntl's F_SETLK/F_SETLKW and their open-file-description forms) succeeds and takes no
lock, so no other process (the same command's included) sees it. Locks are not refused outright because sqlite,
lockf users and the like would then fail on the sandbox's own files; the cost is that processes of one command
cannot exclude each other with a lock. F_GETLK still asks the kernel: no sandbox can hold a lock to be seen.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile

KEYRINGS = ("add_key", "request_key", "keyctl")
BLOCKED = (
    *KEYRINGS,
    "acct", "adjtimex", "bpf", "clock_adjtime", "clock_settime", "create_module", "delete_module", "finit_module",
    "fanotify_init", "get_kernel_syms", "get_mempolicy", "init_module", "ioperm", "iopl", "kcmp", "kexec_file_load",
    "kexec_load", "lookup_dcookie", "mbind", "migrate_pages", "move_pages", "name_to_handle_at", "nfsservctl",
    "open_by_handle_at", "perf_event_open", "pivot_root", "process_vm_readv", "process_vm_writev", "ptrace",
    "query_module", "quotactl", "quotactl_fd", "reboot", "set_mempolicy", "setns", "settimeofday", "stime", "swapon",
    "swapoff", "sysfs", "syslog", "_sysctl", "umount", "umount2", "unshare", "uselib", "userfaultfd", "ustat",
    "vhangup", "vm86", "vm86old",
    "mount", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount", "mount_setattr",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "inotify_init", "inotify_init1", "inotify_add_watch",
)
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6)  # what socket/socketpair may make; the rest: EAFNOSUPPORT
F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW = 6, 7, 37, 38  # take no lock (answer 0): see the docstring
F_SETLEASE, F_NOTIFY = 1024, 1026  # a lease and dnotify: notification channels on a shared file, refused
CLONE_NEW = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
             "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
             "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080}
KEYCTL_JOIN_SESSION_KEYRING = 1


def _library():
    import pyseccomp  # raises RuntimeError where libseccomp.so is not installed

    return pyseccomp


@functools.lru_cache(maxsize=1)
def filter_bpf() -> bytes:
    """The compiled filter (BPF program bytes, for `bwrap --seccomp FD`)."""
    sc = _library()
    f = sc.SyscallFilter(sc.ALLOW)
    for name in BLOCKED:
        try:
            f.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, RuntimeError, ValueError):  # not a system call of this architecture (vm86 on arm64)
            continue
    for flag in CLONE_NEW.values():  # clone's first argument holds the flags on x86_64 and arm64 alike
        f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for call in ("socket", "socketpair"):
        for family in _refused_families():
            f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), call, family(sc))
    f.add_rule(sc.ERRNO(0), "flock")
    for cmd in (F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW):  # the kernel reads cmd as 32 bits: compare those
        f.add_rule(sc.ERRNO(0), "fcntl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, cmd))
    for cmd in (F_SETLEASE, F_NOTIFY):
        f.add_rule(sc.ERRNO(errno.EPERM), "fcntl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, cmd))
    with tempfile.TemporaryFile() as fh:
        f.export_bpf(fh)
        fh.seek(0)
        return fh.read()


def _refused_families() -> list:
    """One comparison per rule (libseccomp takes one per argument): below, between and above the allowed
    families, as whole 64-bit values."""
    refused = [lambda sc, v=v: sc.Arg(0, sc.EQ, v) for v in range(max(SOCKET_FAMILIES))
               if v not in SOCKET_FAMILIES]
    return [*refused, lambda sc: sc.Arg(0, sc.GE, max(SOCKET_FAMILIES) + 1)]


@functools.lru_cache(maxsize=1)
def keyctl_number() -> int:
    """keyctl's system call number here (the keeper joins a fresh session keyring with it)."""
    sc = _library()
    return int(sc.resolve_syscall(sc.system_arch(), "keyctl"))


def seccomp_problem() -> str | None:
    """None when the filter can be compiled here, else why not."""
    try:
        filter_bpf()
        keyctl_number()
    except (ImportError, RuntimeError, OSError, ValueError) as e:
        return (f"cannot compile the sandbox's seccomp filter ({type(e).__name__}: {e}); it needs libseccomp "
                f"(Debian's `libseccomp2`) and the `pyseccomp` package")
    return None


def filter_fd() -> int:
    """A pipe holding the filter, for one bwrap to read (the caller passes it and closes it)."""
    r, w = os.pipe()
    try:
        os.write(w, filter_bpf())  # a few hundred bytes: within the pipe's buffer
    finally:
        os.close(w)
    return r
