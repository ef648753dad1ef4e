"""Stripe's state mechanics every resource uses: ids, the clock, events, expanding and paging lists, metadata,
finding a customer or a card."""

from __future__ import annotations

import json
from typing import Any, Callable

from ...base import Service
from . import serialize as ser
from .cards import number_for_token, spec_for_number
from .data_model import ApiKey, Customer, Event, PaymentMethod, StripeDB
from .errors import invalid, no_such

ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
DEFAULT_KEY = "sk_test_env_0_51deterministic"  # env0's seeded test-mode secret key
API_VERSION = "2026-05-27.dahlia"
PAGE = {"limit": "1 to 100, default 10", "starting_after": "an object id: the page after it",
        "ending_before": "an object id: the page before it", "expand": "fields to expand, e.g. data.customer"}
CREATED = {"created": "epoch seconds, or {gt, gte, lt, lte}: only objects created then"}
CHARGE_PAGE = {**PAGE, "expand": "fields to expand, e.g. data.charge", **CREATED}  # lists whose items name a charge


def in_range(value: int, bounds: dict[str, int]) -> bool:
    checks = {"eq": value.__eq__, "gt": value.__gt__, "gte": value.__ge__, "lt": value.__lt__, "lte": value.__le__}
    return all(checks[k](v) for k, v in bounds.items())


_TABLE_OF = {"cus": "customers", "ch": "charges", "py": "charges", "pi": "payment_intents", "pm": "payment_methods",
             "card": "payment_methods", "re": "refunds", "txn": "balance_transactions"}


# the fields Stripe documents as expandable on the objects served here (an id, or null, that expand[] turns into the
# object); any other field is Stripe's "This property cannot be expanded", even one whose value is an id
EXPANDABLE = frozenset({"customer", "balance_transaction", "payment_intent", "payment_method", "latest_charge", "charge",
                        "source", "default_source", "invoice", "refund", "failure_balance_transaction",
                        "default_payment_method"})


class StripeState(Service):
    name = "stripe"
    DB = StripeDB
    db: StripeDB

    def bootstrap(self) -> None:
        self.add_api_key(DEFAULT_KEY)

    def sid(self, prefix: str) -> str:
        return f"{prefix}_{self.new_id(prefix, ALNUM, 24)}"

    def now(self) -> int:
        return int(self.ws.now.timestamp())

    def add_api_key(self, key: str, permissions: tuple[str, ...] | list[str] = ()) -> ApiKey:
        row = ApiKey(id=key, type="restricted" if key.startswith("rk_") else "secret",
                     permissions=tuple(permissions), created=self.now())
        self.db.api_keys[key] = row
        return row

    def event(self, type_: str, obj: dict[str, Any], idempotency_key: str | None = None) -> None:
        eid = self.sid("evt")
        self.db.events[eid] = Event(id=eid, type=type_, api_version=API_VERSION, data_json=json.dumps({"object": obj}),
                                    request_idempotency_key=idempotency_key, created=self.now())

    def add_customer(self, *, name: str | None = None, email: str | None = None, metadata: dict | None = None,
                     created: int | None = None, **fields: Any) -> Customer:
        c = Customer(id=self.sid("cus"), name=name, email=email, metadata_json=json.dumps(metadata or {}),
                     created=created if created is not None else self.now(),
                     invoice_prefix=self.new_id("prefix", "ABCDEF0123456789", 8), **fields)
        self.db.customers[c.id] = c
        return c

    def add_card(self, number: str, customer_id: str | None = None, *, metadata: dict | None = None,
                 created: int | None = None) -> PaymentMethod:
        spec = spec_for_number(number)
        seq = self.db.seq
        pm = PaymentMethod(id=self.sid("pm"), customer_id=customer_id, card_brand=spec["brand"], card_last4=spec["last4"],
                           card_exp_month=1 + seq % 12, card_exp_year=2030 + seq % 6,
                           card_fingerprint=spec["fingerprint"], card_funding=spec["funding"],
                           card_country=spec["country"], failure_code=spec["failure_code"],
                           decline_code=spec["decline_code"], failure_message=spec["failure_message"],
                           authentication_required=spec["authentication_required"] or None,
                           metadata_json=json.dumps(metadata or {}), created=created if created is not None else self.now())
        self.db.payment_methods[pm.id] = pm
        return pm

    def object_by_id(self, ident: str) -> dict[str, Any] | None:
        table = _TABLE_OF.get(ident.split("_", 1)[0])
        row = getattr(self.db, table).get(ident) if table else None
        if row is None:
            return None
        if table == "balance_transactions":
            return ser.balance_transaction(row, self.db, self.now())
        return ser.SERIALIZERS[table](row, self.db)

    def expand(self, obj: dict[str, Any], paths: list[str] | None) -> dict[str, Any]:
        """Stripe's `expand[]`: replace an id field by its object, `data.x` inside lists, `a.b` nested."""
        for path in paths or []:
            self._expand_one(obj, path.split("."), path)
        return obj

    def _expand_one(self, obj: dict[str, Any], parts: list[str], path: str) -> None:
        head, rest = parts[0], parts[1:]
        if head == "data" and obj.get("object") in ("list", "search_result"):
            for item in obj["data"]:
                if rest:
                    self._expand_one(item, rest, path)
            return
        if rest and isinstance(obj.get(head), dict) and head not in EXPANDABLE:  # through a sub-object (a hash)
            self._expand_one(obj[head], rest, path)
            return
        if head not in obj or head not in EXPANDABLE or not isinstance(obj[head], (str, dict, type(None))):
            raise invalid(f"This property cannot be expanded ({head}).", "expand")
        value = obj[head]
        if isinstance(value, str):
            found = self.object_by_id(value)
            if found is None:
                raise invalid(f"This property cannot be expanded ({head}).", "expand")
            obj[head] = value = found
        if rest and isinstance(value, dict):
            self._expand_one(value, rest, path)

    def page(self, rows: list[Any], to_json: Callable[[Any], dict[str, Any]], url: str, limit: int | None,
             starting_after: str | None, ending_before: str | None, expand: list[str] | None,
             created: dict[str, int] | None = None) -> dict[str, Any]:
        """A list object, newest first (ties: the later-made first), `limit` objects after/before a cursor, only
        those `created` in the range when given (`eq`, `gt`, `gte`, `lt`, `lte`, as tool_args.IntRange reads it)."""
        if created:
            rows = [r for r in rows if in_range(r.created, created)]
        if limit is not None and not 1 <= limit <= 100:
            raise invalid("This value must be greater than or equal to 1 and less than or equal to 100.", "limit")
        if starting_after and ending_before:
            raise invalid("You may only specify one of these parameters: ending_before, starting_after.")
        order = {id(r): i for i, r in enumerate(rows)}
        rows = sorted(rows, key=lambda r: (-r.created, -order[id(r)]))
        ids = [r.id for r in rows]
        n = limit or 10
        if starting_after:
            if starting_after not in ids:
                raise invalid(f"No such object: '{starting_after}'", "starting_after", "resource_missing")
            i = ids.index(starting_after) + 1
            chunk, more = rows[i:i + n], len(rows) > i + n
        elif ending_before:
            if ending_before not in ids:
                raise invalid(f"No such object: '{ending_before}'", "ending_before", "resource_missing")
            j = ids.index(ending_before)
            chunk, more = rows[max(0, j - n):j], j - n > 0
        else:
            chunk, more = rows[:n], len(rows) > n
        out = {"object": "list", "data": [to_json(r) for r in chunk], "has_more": more, "url": url}
        return self.expand(out, expand)

    @staticmethod
    def merge_meta(old: str, new: dict | None) -> str:
        """Stripe's metadata update: keys merge, an empty value unsets its key; values are strings."""
        if new is None:
            return old
        cur = ser.meta(old)
        for k, v in new.items():
            if v in ("", None):
                cur.pop(str(k), None)
            else:
                cur[str(k)] = v if isinstance(v, str) else json.dumps(v)
        if len(cur) > 50:
            raise invalid("Metadata can have at most 50 keys.", "metadata")
        return json.dumps(cur)

    def customer_row(self, ident: str, param: str | None = None) -> Customer:
        c = self.db.customers.get(ident)
        if c is None or c.deleted:
            raise no_such("customer", ident, param)
        return c

    def resolve_card(self, ident: str, param: str, customer_id: str | None = None) -> PaymentMethod:
        """A stored PaymentMethod (or card) id, or a test shortcut (`pm_card_visa`, `tok_visa`: a new card each time)."""
        pm = self.db.payment_methods.get(ident)
        if pm is not None:
            return pm
        number = number_for_token(ident)
        if number is None:
            raise no_such("PaymentMethod" if param != "source" else "source", ident, param)
        return self.add_card(number, customer_id if ident.startswith("tok_") else None)
