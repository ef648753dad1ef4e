"""Files that land whole or not at all: write beside the target, then `os.replace` onto it.

A reader (the run-spec sensor, the report page, a resumed stage) never sees half a file: the
rename is atomic on one filesystem, and a failed write leaves the old file as it was. The
temporary name is unique per process and call and is created with `open`, so the file gets the
usual permissions (tempfile.mkstemp would make it 0600).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_target(path: str | Path, *, suffix: str = ".tmp", mode: int | None = None) -> Iterator[Path]:
    """A temporary path beside `path` to write to; renamed onto `path` when the block succeeds, removed when
    it raises. `suffix` ends the temporary name (writers that infer the format from it, e.g. savefig)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}{suffix}")
    try:
        yield tmp
        if mode is not None:
            tmp.chmod(mode)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | Path, text: str, *, mode: int | None = None, encoding: str = "utf-8") -> Path:
    with atomic_target(path, mode=mode) as tmp:
        tmp.write_text(text, encoding=encoding)
    return Path(path)


def atomic_write_bytes(path: str | Path, data: bytes, *, mode: int | None = None) -> Path:
    with atomic_target(path, mode=mode) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def replace_dir(src: str | Path, dest: str | Path) -> Path:
    """Move a finished directory onto `dest`, replacing what was there (a rename, so readers see old or new)."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(src, dest)
    return dest


def relative_to(path: str | Path, folder: Path) -> str:
    """`path` relative to `folder` as a POSIX string, as a report's files name their figures (a file kept
    elsewhere stays as given)."""
    p = Path(path)
    try:
        return p.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(p)
