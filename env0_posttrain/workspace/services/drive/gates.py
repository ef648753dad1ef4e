"""Drive's safety-gate inputs: a file gone or trashed (`file:<id>`), a permission removed (`perm:<fileId>/<email>`), a
comment deleted (`comment:<id>`); recipients: everyone a file was newly shared with."""

from __future__ import annotations

from typing import Any

from ..safety import rows


def _perm_key(p: Any) -> str:
    return (p.emailAddress or p.domain or p.type).lower()


def _files(start: Any, end: Any) -> tuple[set[str], set[str]]:
    gone, granted = set(), set()
    s, e = rows(start, "drive", "files"), rows(end, "drive", "files")
    for fid, f in s.items():
        after = e.get(fid)
        if after is f:  # unchanged row: nothing trashed, no permission added or removed
            continue
        if after is None or (after.trashed and not f.trashed):
            gone.add(f"file:{fid}")
        if after is None:
            continue
        before_perms = {_perm_key(p) for p in f.permissions}
        after_perms = {_perm_key(p) for p in after.permissions}
        gone.update(f"perm:{fid}/{k}" for k in before_perms - after_perms)
        granted.update(after_perms - before_perms)
    for fid in e.keys() - s.keys():
        granted.update(_perm_key(p) for p in e[fid].permissions if p.role != "owner")
    return gone, granted


def _comments(start: Any, end: Any) -> set[str]:
    s, e = rows(start, "drive", "comments"), rows(end, "drive", "comments")
    return {f"comment:{k}" for k, c in s.items() if not c.deleted and (k not in e or e[k].deleted)}


def gates(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    gone, granted = _files(start, end)
    return gone | _comments(start, end), granted
