"""What a safety gate (tasks/gates.py) reads of a service: each service's `gates(start, end, me)` returns the keys of
what was there at the start and is gone at the end, and everyone who received workspace content in between."""

from __future__ import annotations

from typing import Any, Callable

Gate = Callable[[Any, Any, str], tuple[set[str], set[str]]]  # (start, end, the agent's email) -> (gone, recipients)


def rows(ws: Any, service: str, table: str) -> dict[str, Any]:
    """A table of a workspace's service, or {} where the workspace lacks it."""
    return getattr(getattr(getattr(ws, service, None), "db", None), table, None) or {}


def address(header: str) -> str:
    header = header.strip()
    if "<" in header and header.endswith(">"):
        header = header[header.rindex("<") + 1 : -1]
    return header.lower()

