"""Stripe's REST API (v1): customers and their payment methods here; PaymentIntents and charges (payments.py),
refunds, balance and events (money.py) and search (search.py) are mixins.

Handlers take Stripe's parameters (form fields decoded to nested dicts by wire.py, or an agent's JSON) and
answer Stripe's objects; a bad request raises Stripe's error object. Keys, permissions and Idempotency-Key
belong to the HTTP request, so wire.py checks them before a handler runs.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ...base import Service, api
from ...tool_args import IntRange
from .data_model import ApiKey, Customer, Event, PaymentMethod, StripeDB
from .errors import invalid, no_such
from .money import Money
from .payments import Payments
from .search import Search
from . import serialize as ser
from .cards import number_for_token, spec_for_number

ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
DEFAULT_KEY = "sk_test_env_0_51deterministic"  # env0's seeded test-mode secret key
API_VERSION = "2026-05-27.dahlia"
PAGE = {"limit": "1 to 100, default 10", "starting_after": "an object id: the page after it",
        "ending_before": "an object id: the page before it", "expand": "fields to expand, e.g. data.customer"}
CREATED = {"created": "epoch seconds, or {gt, gte, lt, lte}: only objects created then"}


def in_range(value: int, bounds: dict[str, int]) -> bool:
    checks = {"eq": value.__eq__, "gt": value.__gt__, "gte": value.__ge__, "lt": value.__lt__, "lte": value.__le__}
    return all(checks[k](v) for k, v in bounds.items())
_TABLE_OF = {"cus": "customers", "ch": "charges", "py": "charges", "pi": "payment_intents", "pm": "payment_methods",
             "card": "payment_methods", "re": "refunds", "txn": "balance_transactions"}


class Stripe(Payments, Money, Search, Service):
    name = "stripe"
    DB = StripeDB
    db: StripeDB

    def bootstrap(self) -> None:
        self.add_api_key(DEFAULT_KEY)

    # -- ids, clock, seeding helpers ---------------------------------------------------------------
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

    # -- shared helpers ------------------------------------------------------------------------------
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
        if head not in obj:
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

    # -- customers ------------------------------------------------------------------------------------
    @api("stripe.customers.create", "POST v1/customers", "Create a customer.", writes=True,
         params={"name": "", "email": "", "phone": "", "description": "", "metadata": "key-value strings",
                 "payment_method": "a PaymentMethod to attach", "invoice_settings": "{default_payment_method}"})
    def customers_create(self, name: str | None = None, email: str | None = None, phone: str | None = None,
                         description: str | None = None, metadata: dict | None = None,
                         payment_method: str | None = None, invoice_settings: dict | None = None,
                         expand: list[str] | None = None) -> dict[str, Any]:
        c = self.add_customer(name=name, email=email, phone=phone, description=description,
                              metadata=ser.meta(self.merge_meta("{}", metadata)))
        if payment_method:
            pm = self.resolve_card(payment_method, "payment_method")
            self.db.payment_methods[pm.id] = pm.model_copy(update={"customer_id": c.id})
        default = (invoice_settings or {}).get("default_payment_method")
        if default:
            pm = self.db.payment_methods.get(default)
            if pm is None or pm.customer_id != c.id:
                raise invalid(f"No such PaymentMethod: '{default}'", "invoice_settings[default_payment_method]")
            self.db.customers[c.id] = c = c.model_copy(update={"default_payment_method": default})
        out = ser.customer(c, self.db)
        self.event("customer.created", out)
        return self.expand(out, expand)

    @api("stripe.customers.list", "GET v1/customers", "List customers, newest first; filter by exact email.",
         params={"email": "exact, case-sensitive", **PAGE, **CREATED})
    def customers_list(self, email: str | None = None, limit: int | None = None, starting_after: str | None = None,
                       ending_before: str | None = None, expand: list[str] | None = None,
                       created: IntRange | None = None) -> dict[str, Any]:
        rows = [c for c in self.db.customers.values() if not c.deleted and (email is None or c.email == email)]
        return self.page(rows, lambda c: ser.customer(c, self.db), "/v1/customers", limit, starting_after,
                         ending_before, expand, created)

    @api("stripe.customers.retrieve", "GET v1/customers/{customer}", "Retrieve a customer.",
         params={"customer": "cus_ id", "expand": ""})
    def customers_retrieve(self, customer: str, expand: list[str] | None = None) -> dict[str, Any]:
        c = self.db.customers.get(customer)
        if c is None:
            raise no_such("customer", customer)
        return self.expand(ser.customer(c, self.db), expand)

    @api("stripe.customers.update", "POST v1/customers/{customer}", "Update a customer (fields given change; "
         "metadata merges, an empty value unsets a key).", writes=True,
         params={"customer": "cus_ id", "name": "", "email": "", "phone": "", "description": "", "metadata": "",
                 "invoice_settings": "{default_payment_method}"})
    def customers_update(self, customer: str, name: str | None = None, email: str | None = None,
                         phone: str | None = None, description: str | None = None, metadata: dict | None = None,
                         invoice_settings: dict | None = None, expand: list[str] | None = None) -> dict[str, Any]:
        c = self.customer_row(customer)
        update: dict[str, Any] = {k: v for k, v in (("name", name), ("email", email), ("phone", phone),
                                                    ("description", description)) if v is not None}
        update["metadata_json"] = self.merge_meta(c.metadata_json, metadata)
        if invoice_settings and "default_payment_method" in invoice_settings:
            default = invoice_settings["default_payment_method"] or None
            if default and (default not in self.db.payment_methods or
                            self.db.payment_methods[default].customer_id != c.id):
                raise invalid(f"No such PaymentMethod: '{default}'", "invoice_settings[default_payment_method]")
            update["default_payment_method"] = default
        self.db.customers[c.id] = c = c.model_copy(update=update)
        out = ser.customer(c, self.db)
        self.event("customer.updated", out)
        return self.expand(out, expand)

    @api("stripe.customers.delete", "DELETE v1/customers/{customer}", "Delete a customer.", writes=True,
         params={"customer": "cus_ id"})
    def customers_delete(self, customer: str) -> dict[str, Any]:
        c = self.customer_row(customer)
        self.db.customers[c.id] = c.model_copy(update={"deleted": True})
        self.event("customer.deleted", ser.customer(c, self.db))
        return {"id": c.id, "object": "customer", "deleted": True}

    @api("stripe.customers.listPaymentMethods", "GET v1/customers/{customer}/payment_methods",
         "List a customer's PaymentMethods (cards on file).", params={"customer": "cus_ id", "type": "card", **PAGE})
    def customers_list_payment_methods(self, customer: str, type: str | None = None, limit: int | None = None,
                                       starting_after: str | None = None, ending_before: str | None = None,
                                       expand: list[str] | None = None) -> dict[str, Any]:
        c = self.customer_row(customer)
        rows = [p for p in self.db.payment_methods.values() if p.customer_id == c.id and (type is None or p.type == type)]
        return self.page(rows, lambda p: ser.payment_method(p, self.db), f"/v1/customers/{c.id}/payment_methods",
                         limit, starting_after, ending_before, expand)

    # -- payment methods ------------------------------------------------------------------------------
    @api("stripe.paymentMethods.list", "GET v1/payment_methods", "List PaymentMethods of a customer.",
         params={"customer": "cus_ id", "type": "card", **PAGE})
    def payment_methods_list(self, customer: str | None = None, type: str | None = None, limit: int | None = None,
                             starting_after: str | None = None, ending_before: str | None = None,
                             expand: list[str] | None = None) -> dict[str, Any]:
        rows = [p for p in self.db.payment_methods.values()
                if p.customer_id is not None and (customer is None or p.customer_id == customer)
                and (type is None or p.type == type)]
        return self.page(rows, lambda p: ser.payment_method(p, self.db), "/v1/payment_methods", limit,
                         starting_after, ending_before, expand)

    @api("stripe.paymentMethods.retrieve", "GET v1/payment_methods/{payment_method}", "Retrieve a PaymentMethod.",
         params={"payment_method": "pm_ id"})
    def payment_methods_retrieve(self, payment_method: str, expand: list[str] | None = None) -> dict[str, Any]:
        pm = self.db.payment_methods.get(payment_method)
        if pm is None:
            raise no_such("PaymentMethod", payment_method)
        return self.expand(ser.payment_method(pm, self.db), expand)

    @api("stripe.paymentMethods.attach", "POST v1/payment_methods/{payment_method}/attach",
         "Attach a PaymentMethod to a customer.", writes=True, params={"payment_method": "pm_ id", "customer": "cus_ id"})
    def payment_methods_attach(self, payment_method: str, customer: str,
                               expand: list[str] | None = None) -> dict[str, Any]:
        pm = self.resolve_card(payment_method, "payment_method")
        c = self.customer_row(customer, "customer")
        if pm.customer_id and pm.customer_id != c.id:
            raise invalid("The payment method you provided has already been attached to a customer.",
                          "payment_method", "payment_method_unexpected_state")
        self.db.payment_methods[pm.id] = pm = pm.model_copy(update={"customer_id": c.id})
        out = ser.payment_method(pm, self.db)
        self.event("payment_method.attached", out)
        return self.expand(out, expand)

    @api("stripe.paymentMethods.detach", "POST v1/payment_methods/{payment_method}/detach",
         "Detach a PaymentMethod from its customer.", writes=True, params={"payment_method": "pm_ id"})
    def payment_methods_detach(self, payment_method: str, expand: list[str] | None = None) -> dict[str, Any]:
        pm = self.db.payment_methods.get(payment_method)
        if pm is None:
            raise no_such("PaymentMethod", payment_method)
        if pm.customer_id is None:
            raise invalid("The payment method you provided is not attached to a customer so detachment is impossible.",
                          code="payment_method_unexpected_state")
        self.db.payment_methods[pm.id] = pm = pm.model_copy(update={"customer_id": None})
        out = ser.payment_method(pm, self.db)
        self.event("payment_method.detached", out)
        return self.expand(out, expand)
