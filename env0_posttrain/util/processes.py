"""Whether the process that owns something (a Dagster run, a training) still runs on this machine."""

from __future__ import annotations

import socket

import psutil


def process_alive(pid: int | None, started_at: float | None = None) -> bool:
    """Whether process `pid` of this machine runs and is the one that started by `started_at` (not a reuse)."""
    if pid is None:
        return False
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return started_at is None or proc.create_time() <= started_at + 1.0
    except psutil.NoSuchProcess:
        return False


def this_host() -> str:
    return socket.gethostname()


def signal_cause(returncode: int | None) -> str | None:
    """A child's exit status in plain words when a signal ended it (Popen's negative return code), else None."""
    import signal

    if returncode is None or returncode >= 0:
        return None
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    why = {
        signal.SIGKILL: "likely out of memory (the kernel's OOM killer sends it; `dmesg` or `journalctl -k` says) "
                        "or a kill -9 from outside",
        signal.SIGTERM: "stopped from outside (a run termination, a shutdown, a pod eviction)",
        signal.SIGSEGV: "a crash in native code (torch, a CUDA driver)",
        signal.SIGBUS: "a crash reading memory (often a full /dev/shm or a truncated memory-mapped file)",
        signal.SIGINT: "interrupted (Ctrl-C)",
    }.get(number, "ended from outside")
    return f"killed by signal {number} ({name}): {why}"
