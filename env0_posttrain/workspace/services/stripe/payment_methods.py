"""Stripe paymentMethods: cards, listed, retrieved, attached to and detached from customers."""

from __future__ import annotations

from typing import Any

from ...base import api
from . import serialize as ser
from .errors import invalid, no_such
from .state import PAGE, StripeState


class PaymentMethods(StripeState):
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
