"""Docs' safety-gate input: a document deleted (`doc:<id>`); Docs sends content to no one."""

from __future__ import annotations

from typing import Any

from ..safety import rows


def gates(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    s, e = rows(start, "docs", "documents"), rows(end, "docs", "documents")
    return {f"doc:{d}" for d in s.keys() - e.keys()}, set()
