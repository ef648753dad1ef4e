"""env0's /_admin/state and /_admin/diff JSON, the parts every service's projection shares: env0's timestamps and
its way of diffing two projections (by id; a changed row as its changed fields or whole, a new owner whole). Each
service's env0_shape.py projects its own rows with these."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..environment import Workspace

State = Callable[["Workspace"], dict[str, Any]]  # a workspace -> env0's /_admin/state JSON for one service
Diff = Callable[[dict, dict], dict]  # two such projections -> env0's /_admin/diff JSON


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).replace(tzinfo=None).isoformat()


def iso(rfc: str | None) -> str | None:
    return rfc.replace(".000Z", "").replace("Z", "") if rfc else None


def now_iso(ws: Workspace) -> str:
    return ws.now.replace(tzinfo=None).isoformat()


def by_key(items: list[dict], key: str) -> dict[str, dict]:
    return {str(i[key]): i for i in items}


def changes(cur: dict, old: dict) -> dict:
    return {k: v for k, v in cur.items() if old.get(k) != v}


def diff_rows(old: list[dict], cur: list[dict], key: str = "id", updated: str = "changes", deleted: str = "full") -> dict:
    o, c = by_key(old, key), by_key(cur, key)
    out: dict[str, list] = {"added": [v for k, v in c.items() if k not in o], "updated": [], "deleted": []}
    for k, v in c.items():
        if k in o and v != o[k]:
            out["updated"].append({key: k, **changes(v, o[k])} if updated == "changes" else v)
    out["deleted"] = [o[k] if deleted == "full" else {key: k} for k in o if k not in c]
    return out


def any_change(d: dict) -> bool:
    return any(bool(v) for part in d.values() for v in (part.values() if isinstance(part, dict) else [part]))


def by_owner(old: dict, cur: dict, owners: str, diff_one) -> dict:
    """env0's per-owner diff (users or workspaces): a new owner is added whole, a changed one carries its diff."""
    out: dict[str, dict] = {"added": {}, "updated": {}, "deleted": {}}
    for key, c in cur[owners].items():
        o = old[owners].get(key)
        if o is None:
            out["added"][key] = c
        elif (d := diff_one(o, c)) is not None:
            out["updated"][key] = d
    return out
