"""A reader's lock on the store's sidecar lock file that needs no write access to the data dir."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def shared_file_lock(path: Path, timeout_s: float) -> Iterator[None]:
    """A shared flock on the sidecar lock file, opened read-only: it waits out a writer's exclusive lock (filelock
    takes flock LOCK_EX) without needing write access. No lock file: no writer has used this store, nothing to
    wait for."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield
        return
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path}: a writer held the store's lock for {timeout_s:.0f} s") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
