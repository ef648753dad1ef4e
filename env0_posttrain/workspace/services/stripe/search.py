"""Stripe's Search API (`/v1/customers/search`, `/v1/charges/search`, `/v1/payment_intents/search`): its query
language's clauses `field:'value'` (exact, case-insensitive), `field~'value'` (substring), `field>number` (and
`<`, `>=`, `<=`), `metadata['key']:'value'`, `-` to negate, joined by AND or by OR (not both)."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from . import serialize as ser
from .errors import invalid
from .state import StripeState

_CLAUSE = re.compile(r"""\s*(-?)(metadata\[['"]([^'"]+)['"]\]|[a-z_]+)\s*(>=|<=|:|~|>|<)\s*('([^']*)'|"([^"]*)"|-?\d+)\s*""")
# the fields Stripe lets each resource be searched by -> the row attribute
FIELDS = {"customers": {"email": "email", "name": "name", "phone": "phone", "created": "created"},
          "charges": {"amount": "amount", "currency": "currency", "customer": "customer_id", "status": "status",
                      "created": "created", "refunded": "refunded"},
          "payment_intents": {"amount": "amount", "currency": "currency", "customer": "customer_id",
                              "status": "status", "created": "created"}}


def parse(query: str, resource: str) -> tuple[list[Callable[[Any], bool]], str]:
    """(clause predicates, "AND" | "OR") of a search query; a clause Stripe would refuse is a 400."""
    parts = re.split(r"\s+(AND|OR)\s+", query.strip())
    joins = set(parts[1::2])
    if len(joins) > 1:
        raise invalid("Search queries cannot mix AND and OR.", "query")
    preds = []
    for text in parts[0::2]:
        m = _CLAUSE.fullmatch(text)
        if not m:
            raise invalid(f"Invalid search query: could not parse the clause {text!r}.", "query")
        neg, field, meta_key, op, raw, q1, q2 = m.groups()
        value = q1 if q1 is not None else q2 if q2 is not None else raw
        if meta_key is None and field not in FIELDS[resource]:
            raise invalid(f"Field '{field}' is an unsupported search field for {resource}. Supported: "
                          f"{', '.join(sorted(FIELDS[resource]))}, metadata['key'].", "query")
        preds.append(_predicate(FIELDS[resource].get(field, ""), meta_key, op, value, bool(neg)))
    return preds, (joins.pop() if joins else "AND")


def _predicate(attr: str, meta_key: str | None, op: str, value: str, neg: bool) -> Callable[[Any], bool]:
    def test(row: Any) -> bool:
        cur = ser.meta(row.metadata_json).get(meta_key) if meta_key else getattr(row, attr, None)
        if op in (">", "<", ">=", "<="):
            try:
                a, b = int(cur), int(value)
            except (TypeError, ValueError):
                return False
            hit = {">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]
        elif cur is None:
            hit = False
        elif isinstance(cur, bool):
            hit = str(cur).lower() == value.lower()
        elif op == "~":
            hit = value.lower() in str(cur).lower()
        else:
            hit = str(cur).lower() == value.lower()
        return hit != neg

    return test


class Search(StripeState):
    def _search(self, resource: str, query: str, limit: int | None, page: str | None,
                to_json: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        if limit is not None and not 1 <= limit <= 100:
            raise invalid("This value must be greater than or equal to 1 and less than or equal to 100.", "limit")
        preds, join = parse(query, resource)
        rows = [r for r in getattr(self.db, resource).values() if not getattr(r, "deleted", None)]
        hits = [r for r in rows if (all if join == "AND" else any)(p(r) for p in preds)]
        hits.sort(key=lambda r: -r.created)
        try:
            start = int(json.loads(page)["offset"]) if page else 0
        except (ValueError, KeyError, TypeError):
            raise invalid("Invalid page token.", "page") from None
        n = limit or 10
        chunk = hits[start:start + n]
        more = len(hits) > start + n
        return {"object": "search_result", "data": [to_json(r) for r in chunk], "has_more": more,
                "next_page": json.dumps({"offset": start + n}) if more else None,
                "url": f"/v1/{resource}/search", "total_count": len(hits)}
