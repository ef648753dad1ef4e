"""Short content digests: one way to turn bytes or a JSON-able value into a hex id.

Cache keys, revisions and data versions are sha256 cut to `n` hex characters (12 to 24 in this
project: short enough to read in a path or the UI, long enough that a collision among a run's
artifacts is not a concern). Values are canonical JSON (sorted keys, `str()` for what JSON lacks)
so equal content gives an equal digest whatever the dict order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


def sha256_hex(*chunks: bytes | str, n: int | None = None) -> str:
    """sha256 of the chunks fed in order (str as UTF-8), as hex, cut to `n` characters (all 64 when None)."""
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(chunk.encode() if isinstance(chunk, str) else chunk)
    return h.hexdigest()[:n]


def digest(obj: Any, n: int = 16) -> str:
    """Digest of a JSON-able value (its canonical JSON)."""
    return sha256_hex(canonical_json(obj), n=n)


def file_digest(path: str | Path, n: int | None = 12) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()[:n]


def files_digest(paths: Iterable[Path], root: Path, *, salt: str = "", n: int = 12) -> str:
    """Digest of files' names (relative to `root`, POSIX form) and bytes, in the given order."""
    h = hashlib.sha256(salt.encode())
    for p in paths:
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:n]
