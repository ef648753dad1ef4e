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
