"""One env0 script run (solve.sh or test.sh) at a time on this machine, across threads and processes.

env0 packages' scripts write fixed paths (/tmp/state.json, /tmp/diff.json ...), so two at once would read each
other's files. A file lock (flock) covers worker processes and other runs; WAITED counts what it cost here.
"""

from __future__ import annotations

import fcntl
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

LOCK_PATH = Path(tempfile.gettempdir()) / "env0-posttrain-verifier.lock"
_THREAD_LOCK = threading.Lock()
WAITED = {"seconds": 0.0, "runs": 0}


@contextmanager
def script_lock() -> Iterator[None]:
    t0 = time.perf_counter()
    with _THREAD_LOCK, open(LOCK_PATH, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        WAITED["seconds"] += time.perf_counter() - t0
        WAITED["runs"] += 1
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
