"""A compact record of what an episode changed in its workspace, kept with the episode for readers.

The verifier sees the start and end states and drops them; without a record nobody can later see what an
agent actually did to the mailbox or calendar. Kept small: an updated row keeps only the fields that changed,
long strings are cut, and a table lists at most MAX_ROWS rows per kind (the rest are counted).
"""

from __future__ import annotations

from typing import Any

MAX_STR = 400
MAX_ROWS = 25


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_STR:
        return value[:MAX_STR] + f"… ({len(value)} chars)"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value[:MAX_ROWS]] + ([f"… {len(value) - MAX_ROWS} more"] if len(value) > MAX_ROWS else [])
    return value


def _changed_fields(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    keys = [k for k in {**before, **after} if before.get(k) != after.get(k)]
    return {k: {"before": _cut(before.get(k)), "after": _cut(after.get(k))} for k in sorted(keys)}


def compact_diff(diff: dict[str, Any]) -> dict[str, Any]:
    """Workspace.diff's shape ({service: {table: {added|updated|deleted: {row_id: row}}}}), with each updated row
    reduced to {field: {before, after}} and at most MAX_ROWS rows per kind (`more`: how many were left out)."""
    out: dict[str, Any] = {}
    for service, tables in diff.items():
        for table, kinds in tables.items():
            t: dict[str, Any] = {}
            for kind, rows in kinds.items():
                ids = list(rows)[:MAX_ROWS]
                if kind == "updated":
                    t[kind] = {i: _changed_fields(rows[i]["before"], rows[i]["after"]) for i in ids}
                else:
                    t[kind] = {i: _cut(rows[i]) for i in ids}
                if len(rows) > MAX_ROWS:
                    t.setdefault("more", {})[kind] = len(rows) - MAX_ROWS
            out.setdefault(service, {})[table] = t
    return out
