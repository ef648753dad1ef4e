"""env0's auth `/_admin/state` and `/_admin/diff` JSON: one list per table, as env0's verifiers read them
(`consent_records[].granted_scopes` space-separated with `revoked_at`, `access_tokens[].revoked`,
`refresh_tokens[].replaced_by`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...environment import Workspace

TABLES = {  # env0's table name -> (our table, its key)
    "users": ("users", "id"), "oauth_clients": ("clients", "client_id"), "consent_records": ("consents", "id"),
    "authorization_codes": ("codes", "code"), "access_tokens": ("access_tokens", "jti"),
    "refresh_tokens": ("refresh_tokens", "id"), "sessions": ("sessions", "id")}


def auth_state(ws: Workspace) -> dict[str, Any]:
    db = ws.auth.db
    out: dict[str, Any] = {}
    for name, (table, _key) in TABLES.items():
        rows = []
        for _, row in sorted(getattr(db, table).items()):
            d = row.model_dump(mode="json")
            d.pop("password", None)
            d.pop("client_secret", None)
            rows.append(d)
        out[name] = rows
    out["audit_event_count"] = len(db.audit)
    out["timestamp"] = ws.auth.stamp()
    return out


def auth_diff(old: dict, cur: dict) -> dict:
    """{"added"|"updated"|"deleted": {table: [rows]}}; an updated row carries its key and the changed fields."""
    out: dict[str, dict] = {"added": {}, "updated": {}, "deleted": {}}
    for name, (_table, key) in TABLES.items():
        o = {str(r[key]): r for r in old.get(name, [])}
        c = {str(r[key]): r for r in cur.get(name, [])}
        added = [v for k, v in c.items() if k not in o]
        updated = [{key: k, **{f: v for f, v in r.items() if o[k].get(f) != v}} for k, r in c.items() if k in o and r != o[k]]
        deleted = [v for k, v in o.items() if k not in c]
        for kind, rows in (("added", added), ("updated", updated), ("deleted", deleted)):
            if rows:
                out[kind][name] = rows
    return out
