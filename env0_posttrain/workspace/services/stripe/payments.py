"""PaymentIntents and charges (mixed into the Stripe toolkit). One path charges a card: `charge_card` makes the
Charge (and, when it succeeds, its balance transaction); a test card's decline leaves a failed Charge and
answers Stripe's 402 card_error, with the changes kept (a `CommittedError`)."""

from __future__ import annotations

import json
from typing import Any

from ...base import api
from ...tool_args import IntRange
from .data_model import BalanceTransaction, Charge, PaymentIntent, PaymentMethod
from .errors import invalid, missing, no_such, stripe_error
from . import serialize as ser

_PAGE = {"limit": "1 to 100, default 10", "starting_after": "an object id: the page after it",
         "ending_before": "an object id: the page before it", "expand": "fields to expand, e.g. data.customer",
         "created": "epoch seconds, or {gt, gte, lt, lte}: only objects created then"}
_MINIMUM = {"usd": 50, "eur": 50, "gbp": 30, "cad": 50, "aud": 50, "jpy": 50}
_DAY = 86_400


def fee_for_charge(amount: int) -> int:
    """Stripe's US card pricing: 2.9 % + 30 cents."""
    return int(round(amount * 0.029)) + 30


class Payments:
    """Mixed into Stripe (toolkit.py)."""

    def _amount(self, amount: int, currency: str) -> str:
        cur = (currency or "").lower()
        if len(cur) != 3 or not cur.isalpha():
            raise invalid(f"Invalid currency: {currency}.", "currency")
        if amount < _MINIMUM.get(cur, 1):
            raise invalid(f"Amount must be at least {_MINIMUM.get(cur, 1)} cents", "amount", "amount_too_small")
        if amount > 99_999_999:
            raise invalid("Amount must be no more than $999,999.99", "amount", "amount_too_large")
        return cur

    def charge_card(self, pm: PaymentMethod, amount: int, currency: str, *, customer_id: str | None,
                    description: str | None, metadata_json: str, pi_id: str | None = None,
                    capture: bool = True, receipt_email: str | None = None,
                    statement_descriptor: str | None = None) -> Charge:
        """Charge `pm` once: a succeeded Charge (captured or authorized) or a failed one (`failure_code` set)."""
        now = self.now()
        ch_id = self.sid("ch")
        declined = pm.failure_code is not None
        outcome = ({"network_status": "declined_by_network", "reason": pm.decline_code or pm.failure_code,
                    "risk_level": "normal", "risk_score": 32, "seller_message": "The bank did not return any further "
                    "details with this decline.", "type": "issuer_declined"} if declined else
                   {"network_status": "approved_by_network", "reason": None, "risk_level": "normal", "risk_score": 32,
                    "seller_message": "Payment complete.", "type": "authorized"})
        ch = Charge(id=ch_id, amount=amount, amount_captured=amount if capture and not declined else 0,
                    currency=currency, status="failed" if declined else "succeeded", paid=not declined,
                    captured=capture and not declined, customer_id=customer_id, payment_intent_id=pi_id,
                    payment_method_id=pm.id, description=description, failure_code=pm.failure_code,
                    failure_message=pm.failure_message, receipt_email=receipt_email,
                    statement_descriptor=statement_descriptor,
                    calculated_statement_descriptor=(statement_descriptor or "ENV0 TEST")[:22],
                    receipt_url=None if declined else f"https://pay.stripe.com/receipts/payment/{ch_id}",
                    outcome_json=json.dumps(outcome), payment_method_details_json=json.dumps(ser.payment_method_details(pm)),
                    metadata_json=metadata_json, created=now)
        if not declined and capture:
            ch = ch.model_copy(update={"balance_transaction_id": self._charge_txn(ch).id})
        self.db.charges[ch.id] = ch
        self.event("charge.failed" if declined else "charge.succeeded", ser.charge(ch, self.db))
        return ch

    def _charge_txn(self, ch: Charge) -> BalanceTransaction:
        fee = fee_for_charge(ch.amount_captured or ch.amount)
        amount = ch.amount_captured or ch.amount
        txn = BalanceTransaction(id=self.sid("txn"), amount=amount, currency=ch.currency, fee=fee, net=amount - fee,
                                 type="charge", reporting_category="charge", source_id=ch.id, status="pending",
                                 fee_details_json=json.dumps([{"amount": fee, "application": None, "currency": ch.currency,
                                                               "description": "Stripe processing fees",
                                                               "type": "stripe_fee"}]),
                                 available_on=ch.created + 2 * _DAY, created=ch.created)
        self.db.balance_transactions[txn.id] = txn
        return txn

    def _card_error(self, ch: Charge, pm: PaymentMethod, pi: PaymentIntent | None) -> Exception:
        extra: dict[str, Any] = {"charge": ch.id, "decline_code": pm.decline_code,
                                 "payment_method": ser.payment_method(pm, self.db)}
        if pi is not None:
            extra["payment_intent"] = ser.payment_intent(pi, self.db)
        return stripe_error(402, pm.failure_message or "Your card was declined.", "card_error",
                            code=pm.failure_code, commit=True, **extra)

    # -- PaymentIntents --------------------------------------------------------------------------------
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
         params={"customer": "cus_ id", **_PAGE})
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

    # -- charges (the Charges API) -------------------------------------------------------------------
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
         params={"customer": "cus_ id", "payment_intent": "pi_ id", **_PAGE})
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
