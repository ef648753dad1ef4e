"""Our Stripe state in env0's /_admin/state and /_admin/diff shapes: one list of rows per table, with env0's
column names (`customer_id`, `metadata_json`, ...), which is what env0's Stripe verifiers read; the diff is
{"added" | "updated" | "deleted": {table: [rows]}} between two states (by id)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...environment import Workspace

TABLES = ("customers", "payment_methods", "payment_intents", "charges", "refunds", "balance_transactions", "events")


def stripe_state(ws: Workspace) -> dict[str, Any]:
    db = ws.stripe.db
    out: dict[str, Any] = {t: [r.model_dump(mode="json") for r in getattr(db, t).values()] for t in TABLES}
    out["timestamp"] = ws.now.replace(tzinfo=None).isoformat()
    return out


def stripe_diff(old: dict, cur: dict) -> dict:
    out: dict[str, dict[str, list]] = {"added": {}, "updated": {}, "deleted": {}}
    for t in TABLES:
        o = {r["id"]: r for r in old.get(t, [])}
        c = {r["id"]: r for r in cur.get(t, [])}
        parts = {"added": [r for k, r in c.items() if k not in o],
                 "updated": [r for k, r in c.items() if k in o and o[k] != r],
                 "deleted": [r for k, r in o.items() if k not in c]}
        for kind, rows in parts.items():
            if rows:
                out[kind][t] = rows
    return out
