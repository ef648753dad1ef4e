"""Stripe charges: create (a card charged at once), list, retrieve, update and search."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...tool_args import IntRange
from . import serialize as ser
from .errors import invalid, missing, no_such
from .payments import Payments
from .search import Search
from .state import CREATED, PAGE


class Charges(Payments, Search):
    @api("stripe.charges.create", "POST v1/charges", "Charge a card directly (legacy Charges API): a customer's "
         "default card, or source (a card id or test token such as tok_visa). A decline answers 402 card_error.",
         writes=True, params={"amount": "in the smallest currency unit (cents)", "currency": "e.g. usd",
                              "customer": "cus_ id", "source": "card/pm id or tok_visa", "description": "",
                              "metadata": "key-value strings", "capture": "false: authorize only"})
    def charges_create(self, amount: int, currency: str, customer: str | None = None, source: str | None = None,
                       description: str | None = None, metadata: dict | None = None, capture: bool = True,
                       receipt_email: str | None = None, statement_descriptor: str | None = None,
                       expand: list[str] | None = None) -> dict[str, Any]:
        cur = self._amount(amount, currency)
        cust = self.customer_row(customer, "customer") if customer else None
        if source:
            pm = self.resolve_card(source, "source", cust.id if cust else None)
        elif cust is not None:
            cards = [p for p in self.db.payment_methods.values() if p.customer_id == cust.id]
            pm = self.db.payment_methods.get(cust.default_payment_method or "") or (cards[0] if cards else None)
            if pm is None:
                raise invalid("Cannot charge a customer that has no active card", "card", "missing")
        else:
            raise missing("source")
        ch = self.charge_card(pm, amount, cur, customer_id=cust.id if cust else None, description=description,
                              metadata_json=self.merge_meta("{}", metadata), capture=capture,
                              receipt_email=receipt_email, statement_descriptor=statement_descriptor)
        if ch.status == "failed":
            raise self._card_error(ch, pm, None)
        return self.expand(ser.charge(ch, self.db), expand)

    @api("stripe.charges.list", "GET v1/charges", "List charges, newest first; filter by customer or payment_intent.",
         params={"customer": "cus_ id", "payment_intent": "pi_ id", **PAGE, **CREATED})
    def charges_list(self, customer: str | None = None, payment_intent: str | None = None, limit: int | None = None,
                     starting_after: str | None = None, ending_before: str | None = None,
                     expand: list[str] | None = None, created: IntRange | None = None) -> dict[str, Any]:
        rows = [c for c in self.db.charges.values() if (customer is None or c.customer_id == customer)
                and (payment_intent is None or c.payment_intent_id == payment_intent)]
        return self.page(rows, lambda c: ser.charge(c, self.db), "/v1/charges", limit, starting_after, ending_before,
                         expand, created)

    @api("stripe.charges.retrieve", "GET v1/charges/{charge}", "Retrieve a charge.",
         params={"charge": "ch_ id", "expand": ""})
    def charges_retrieve(self, charge: str, expand: list[str] | None = None) -> dict[str, Any]:
        ch = self.db.charges.get(charge)
        if ch is None:
            raise no_such("charge", charge)
        return self.expand(ser.charge(ch, self.db), expand)

    @api("stripe.charges.update", "POST v1/charges/{charge}", "Update a charge's description or metadata.",
         writes=True, params={"charge": "ch_ id", "description": "", "metadata": ""})
    def charges_update(self, charge: str, description: str | None = None, metadata: dict | None = None,
                       expand: list[str] | None = None) -> dict[str, Any]:
        ch = self.db.charges.get(charge)
        if ch is None:
            raise no_such("charge", charge)
        update: dict[str, Any] = {"metadata_json": self.merge_meta(ch.metadata_json, metadata)}
        if description is not None:
            update["description"] = description
        self.db.charges[ch.id] = ch = ch.model_copy(update=update)
        return self.expand(ser.charge(ch, self.db), expand)

    @api("stripe.charges.search", "GET v1/charges/search", "Search charges: customer:'cus_..', amount>1000, "
         "status:'succeeded', refunded:'true', metadata['order_id']:'1234'; AND / OR.",
         params={"query": "Stripe search query", "limit": "", "page": "next_page of the last answer"})
    def charges_search(self, query: str, limit: int | None = None, page: str | None = None,
                       expand: list[str] | None = None) -> dict[str, Any]:
        return self.expand(self._search("charges", query, limit, page, lambda c: ser.charge(c, self.db)), expand)
