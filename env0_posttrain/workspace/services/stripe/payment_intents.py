"""Stripe paymentIntents: create, confirm, capture, cancel, list, retrieve, update and search."""

from __future__ import annotations

import json
from typing import Any

from ...base import api
from ...tool_args import IntRange
from . import serialize as ser
from .data_model import PaymentIntent, PaymentMethod
from .errors import invalid, no_such
from .payments import Payments
from .search import Search
from .state import CREATED, PAGE


class PaymentIntents(Payments, Search):
    def _intent(self, intent: str) -> PaymentIntent:
        pi = self.db.payment_intents.get(intent)
        if pi is None:
            raise no_such("payment_intent", intent)
        return pi

    @api("stripe.paymentIntents.create", "POST v1/payment_intents", "Create a PaymentIntent (confirm=true to charge "
         "its payment_method at once).", writes=True,
         params={"amount": "in the smallest currency unit (cents)", "currency": "e.g. usd", "customer": "cus_ id",
                 "payment_method": "pm_ id or a test card such as pm_card_visa", "description": "",
                 "metadata": "key-value strings", "confirm": "", "capture_method": "automatic or manual",
                 "receipt_email": "", "off_session": ""})
    def payment_intents_create(self, amount: int, currency: str, customer: str | None = None,
                               payment_method: str | None = None, description: str | None = None,
                               metadata: dict | None = None, confirm: bool = False, capture_method: str = "automatic",
                               receipt_email: str | None = None, off_session: bool | None = None,
                               payment_method_types: list[str] | None = None,
                               automatic_payment_methods: dict | None = None, return_url: str | None = None,
                               statement_descriptor: str | None = None, setup_future_usage: str | None = None,
                               expand: list[str] | None = None) -> dict[str, Any]:
        cur = self._amount(amount, currency)
        if capture_method not in ("automatic", "automatic_async", "manual"):
            raise invalid(f"Invalid capture_method: {capture_method}", "capture_method")
        if customer:
            self.customer_row(customer, "customer")
        pm = self.resolve_card(payment_method, "payment_method", customer) if payment_method else None
        pi_id = self.sid("pi")
        pi = PaymentIntent(id=pi_id, amount=amount, currency=cur,
                           status="requires_confirmation" if pm else "requires_payment_method",
                           client_secret=f"{pi_id}_secret_{self.new_id('secret', 'abcdefghijklmnopqrstuvwxyz0123456789', 25)}",
                           customer_id=customer, payment_method_id=pm.id if pm else None, description=description,
                           capture_method="manual" if capture_method == "manual" else "automatic",
                           receipt_email=receipt_email, metadata_json=self.merge_meta("{}", metadata),
                           statement_descriptor=statement_descriptor, setup_future_usage=setup_future_usage,
                           automatic_payment_methods_json=json.dumps(automatic_payment_methods)
                           if automatic_payment_methods else None,
                           payment_method_types_json=json.dumps(payment_method_types or ["card"]), created=self.now())
        self.db.payment_intents[pi.id] = pi
        self.event("payment_intent.created", ser.payment_intent(pi, self.db))
        if confirm:
            if pm is None:
                raise invalid("You cannot confirm this PaymentIntent because it's missing a payment method. To confirm "
                              "the PaymentIntent with cus, specify a payment method.", "payment_method",
                              "payment_intent_unexpected_state")
            return self.expand(self._confirm(pi, pm), expand)
        return self.expand(ser.payment_intent(pi, self.db), expand)

    def _confirm(self, pi: PaymentIntent, pm: PaymentMethod) -> dict[str, Any]:
        if pi.status not in ("requires_payment_method", "requires_confirmation", "requires_action"):
            raise invalid(f"This PaymentIntent's status is {pi.status}, but it must be one of requires_payment_method, "
                          "requires_confirmation, or requires_action to be confirmed.", code="payment_intent_unexpected_state")
        if pi.customer_id and pm.customer_id and pm.customer_id != pi.customer_id:
            raise invalid(f"The PaymentMethod provided ({pm.id}) belongs to another Customer than the one on this "
                          f"PaymentIntent ({pi.customer_id}).", "payment_method")
        manual = pi.capture_method == "manual"
        ch = self.charge_card(pm, pi.amount, pi.currency, customer_id=pi.customer_id, description=pi.description,
                              metadata_json=pi.metadata_json, pi_id=pi.id, capture=not manual,
                              receipt_email=pi.receipt_email, statement_descriptor=pi.statement_descriptor)
        if ch.status == "failed":
            error = {"charge": ch.id, "code": pm.failure_code, "decline_code": pm.decline_code,
                     "message": pm.failure_message, "payment_method": ser.payment_method(pm, self.db),
                     "type": "card_error"}
            pi = pi.model_copy(update={"status": "requires_payment_method", "payment_method_id": None,
                                       "latest_charge_id": ch.id, "last_payment_error_json": json.dumps(error)})
            self.db.payment_intents[pi.id] = pi
            self.event("payment_intent.payment_failed", ser.payment_intent(pi, self.db))
            raise self._card_error(ch, pm, pi)
        pi = pi.model_copy(update={"status": "requires_capture" if manual else "succeeded", "payment_method_id": pm.id,
                                   "latest_charge_id": ch.id, "last_payment_error_json": None,
                                   "amount_received": 0 if manual else pi.amount,
                                   "amount_capturable": pi.amount if manual else 0})
        self.db.payment_intents[pi.id] = pi
        out = ser.payment_intent(pi, self.db)
        self.event("payment_intent.amount_capturable_updated" if manual else "payment_intent.succeeded", out)
        return out

    @api("stripe.paymentIntents.confirm", "POST v1/payment_intents/{intent}/confirm", "Confirm a PaymentIntent: "
         "charge its (or the given) payment_method. A declined card answers 402 card_error.", writes=True,
         params={"intent": "pi_ id", "payment_method": "pm_ id or a test card such as pm_card_visa"})
    def payment_intents_confirm(self, intent: str, payment_method: str | None = None, off_session: bool | None = None,
                                return_url: str | None = None, receipt_email: str | None = None,
                                expand: list[str] | None = None) -> dict[str, Any]:
        pi = self._intent(intent)
        if receipt_email is not None:  # a confirm's receipt_email is the intent's from then on
            pi = pi.model_copy(update={"receipt_email": receipt_email})
        ident = payment_method or pi.payment_method_id
        if not ident:
            raise invalid("You cannot confirm this PaymentIntent because it's missing a payment method. Update the "
                          "payment_method or pass one with confirm.", "payment_method", "payment_intent_unexpected_state")
        return self.expand(self._confirm(pi, self.resolve_card(ident, "payment_method", pi.customer_id)), expand)

    @api("stripe.paymentIntents.capture", "POST v1/payment_intents/{intent}/capture",
         "Capture an authorized (capture_method=manual) PaymentIntent.", writes=True,
         params={"intent": "pi_ id", "amount_to_capture": "default: all of it"})
    def payment_intents_capture(self, intent: str, amount_to_capture: int | None = None, metadata: dict | None = None,
                                expand: list[str] | None = None) -> dict[str, Any]:
        pi = self._intent(intent)
        if pi.status != "requires_capture":
            raise invalid(f"This PaymentIntent could not be captured because it has a status of {pi.status}. Only a "
                          "PaymentIntent with one of the following statuses may be captured: requires_capture.",
                          code="payment_intent_unexpected_state")
        amount = pi.amount_capturable if amount_to_capture is None else amount_to_capture
        if not 0 < amount <= pi.amount_capturable:
            raise invalid("The amount to capture must be positive and at most the capturable amount.",
                          "amount_to_capture", "amount_too_large")
        ch = self.db.charges[pi.latest_charge_id or ""]
        ch = ch.model_copy(update={"captured": True, "amount_captured": amount})
        ch = ch.model_copy(update={"balance_transaction_id": self._charge_txn(ch).id})
        self.db.charges[ch.id] = ch
        pi = pi.model_copy(update={"status": "succeeded", "amount_received": amount, "amount_capturable": 0,
                                   "metadata_json": self.merge_meta(pi.metadata_json, metadata)})
        self.db.payment_intents[pi.id] = pi
        out = ser.payment_intent(pi, self.db)
        self.event("payment_intent.succeeded", out)
        return self.expand(out, expand)

    @api("stripe.paymentIntents.cancel", "POST v1/payment_intents/{intent}/cancel", "Cancel a PaymentIntent.",
         writes=True, params={"intent": "pi_ id", "cancellation_reason": "duplicate, fraudulent, requested_by_customer, "
                                                                        "abandoned"})
    def payment_intents_cancel(self, intent: str, cancellation_reason: str | None = None,
                               expand: list[str] | None = None) -> dict[str, Any]:
        pi = self._intent(intent)
        if pi.status in ("succeeded", "canceled"):
            raise invalid(f"You cannot cancel this PaymentIntent because it has a status of {pi.status}. Only a "
                          "PaymentIntent with one of the following statuses may be canceled: requires_payment_method, "
                          "requires_capture, requires_confirmation, requires_action, processing.",
                          code="payment_intent_unexpected_state")
        pi = pi.model_copy(update={"status": "canceled", "canceled_at": self.now(),
                                   "cancellation_reason": cancellation_reason})
        self.db.payment_intents[pi.id] = pi
        out = ser.payment_intent(pi, self.db)
        self.event("payment_intent.canceled", out)
        return self.expand(out, expand)

    @api("stripe.paymentIntents.list", "GET v1/payment_intents", "List PaymentIntents, newest first.",
         params={"customer": "cus_ id", **PAGE, **CREATED})
    def payment_intents_list(self, customer: str | None = None, limit: int | None = None,
                             starting_after: str | None = None, ending_before: str | None = None,
                             expand: list[str] | None = None, created: IntRange | None = None) -> dict[str, Any]:
        rows = [p for p in self.db.payment_intents.values() if customer is None or p.customer_id == customer]
        return self.page(rows, lambda p: ser.payment_intent(p, self.db), "/v1/payment_intents", limit,
                         starting_after, ending_before, expand, created)

    @api("stripe.paymentIntents.retrieve", "GET v1/payment_intents/{intent}", "Retrieve a PaymentIntent.",
         params={"intent": "pi_ id", "expand": ""})
    def payment_intents_retrieve(self, intent: str, expand: list[str] | None = None,
                                 client_secret: str | None = None) -> dict[str, Any]:
        return self.expand(ser.payment_intent(self._intent(intent), self.db), expand)

    @api("stripe.paymentIntents.update", "POST v1/payment_intents/{intent}", "Update a PaymentIntent.", writes=True,
         params={"intent": "pi_ id", "amount": "", "description": "", "metadata": "", "payment_method": "",
                 "customer": ""})
    def payment_intents_update(self, intent: str, amount: int | None = None, description: str | None = None,
                               metadata: dict | None = None, payment_method: str | None = None,
                               customer: str | None = None, receipt_email: str | None = None,
                               statement_descriptor: str | None = None, setup_future_usage: str | None = None,
                               expand: list[str] | None = None) -> dict[str, Any]:
        pi = self._intent(intent)
        if pi.status in ("succeeded", "canceled", "processing"):
            raise invalid(f"This PaymentIntent's status is {pi.status}; it can no longer be updated.",
                          code="payment_intent_unexpected_state")
        update: dict[str, Any] = {"metadata_json": self.merge_meta(pi.metadata_json, metadata)}
        if statement_descriptor is not None:
            update["statement_descriptor"] = statement_descriptor or None
        if setup_future_usage is not None:
            update["setup_future_usage"] = setup_future_usage or None
        if amount is not None:
            self._amount(amount, pi.currency)
            update["amount"] = amount
        if description is not None:
            update["description"] = description
        if receipt_email is not None:
            update["receipt_email"] = receipt_email
        if customer is not None:
            update["customer_id"] = self.customer_row(customer, "customer").id
        if payment_method is not None:
            update["payment_method_id"] = self.resolve_card(payment_method, "payment_method", pi.customer_id).id
            update["status"] = "requires_confirmation"
        pi = pi.model_copy(update=update)
        self.db.payment_intents[pi.id] = pi
        return self.expand(ser.payment_intent(pi, self.db), expand)

    @api("stripe.paymentIntents.search", "GET v1/payment_intents/search", "Search PaymentIntents: customer:'cus_..', "
         "status:'succeeded', amount:4999, metadata['order_id']:'1234'; AND / OR.",
         params={"query": "Stripe search query", "limit": "", "page": "next_page of the last answer"})
    def payment_intents_search(self, query: str, limit: int | None = None, page: str | None = None,
                               expand: list[str] | None = None) -> dict[str, Any]:
        return self.expand(self._search("payment_intents", query, limit, page,
                                        lambda p: ser.payment_intent(p, self.db)), expand)
