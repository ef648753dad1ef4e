"""JSONL reading that keeps line numbers, and writing that never leaves a half-written file.

Every error downstream must name the file and the row, so reading yields the 1-based line
number with each parsed row; a line that is not JSON is reported, not raised, so one bad line
does not hide the good ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from env0_posttrain.util.fsutil import atomic_target


@dataclass(frozen=True)
class JsonlLine:
    """One non-blank line: its parsed value, or the reason it could not be parsed."""

    line: int
    value: Any = None
    error: str | None = None


def iter_jsonl(path: str | Path) -> Iterator[JsonlLine]:
    """Yield every non-blank line of a JSONL file with its 1-based line number."""
    with Path(path).open("rb") as fh:
        for lineno, raw_bytes in enumerate(fh, start=1):
            try:
                raw = raw_bytes.decode("utf-8")
            except UnicodeDecodeError as err:
                yield JsonlLine(line=lineno, error=f"not UTF-8 text: {err.reason} at byte {err.start}")
                continue
            if not raw.strip():
                continue
            try:
                yield JsonlLine(line=lineno, value=json.loads(raw))
            except json.JSONDecodeError as err:
                yield JsonlLine(line=lineno, error=f"not valid JSON: {err.msg} at column {err.colno}")


def _to_jsonable(row: Any) -> Any:
    if isinstance(row, BaseModel):
        return row.model_dump(mode="json")
    return row


def dumps_row(row: Any) -> str:
    """One JSONL line; refuses NaN/inf, which json.loads elsewhere would not read back."""
    return json.dumps(_to_jsonable(row), ensure_ascii=False, allow_nan=False)


def write_jsonl_atomic(rows: Iterable[Any], path: str | Path) -> int:
    """Write rows as JSONL via a temporary file in the same directory and an atomic rename.

    If serialising any row fails, the temporary file is removed and an existing file at `path`
    is left exactly as it was.
    """
    n = 0
    with atomic_target(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(dumps_row(row))
            fh.write("\n")
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    return n
