"""Stripe refunds: create (in full or in part), list and retrieve."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...tool_args import IntRange
from . import serialize as ser
from .data_model import BalanceTransaction, Refund
from .errors import invalid, missing, no_such
from .state import CHARGE_PAGE, StripeState

REASONS = ("duplicate", "fraudulent", "requested_by_customer")


class Refunds(StripeState):
    @api("stripe.refunds.create", "POST v1/refunds", "Refund a charge (or a PaymentIntent's charge), in full by "
         "default or `amount` of it.", writes=True,
         params={"charge": "ch_ id", "payment_intent": "pi_ id (instead of charge)",
                 "amount": "cents; default: what is left unrefunded", "reason": ", ".join(REASONS),
                 "metadata": "key-value strings"})
    def refunds_create(self, charge: str | None = None, payment_intent: str | None = None, amount: int | None = None,
                       reason: str | None = None, metadata: dict | None = None,
                       expand: list[str] | None = None) -> dict[str, Any]:
        if charge is None and payment_intent is None:
            raise missing("charge")
        if payment_intent is not None:
            pi = self.db.payment_intents.get(payment_intent)
            if pi is None:
                raise no_such("payment_intent", payment_intent, "payment_intent")
            if charge is None:
                if not pi.latest_charge_id or pi.status != "succeeded":
                    raise invalid(f"This PaymentIntent ({pi.id}) does not have a successful charge to refund.",
                                  "payment_intent", "charge_not_refundable")
                charge = pi.latest_charge_id
        ch = self.db.charges.get(charge or "")
        if ch is None:
            raise no_such("charge", str(charge), "charge")
        if payment_intent is not None and ch.payment_intent_id != payment_intent:  # both named: they must agree
            raise invalid(f"The charge {ch.id} does not belong to the PaymentIntent {payment_intent}.",
                          "payment_intent")
        if reason is not None and reason not in REASONS:
            raise invalid(f"Invalid reason: must be one of {', '.join(REASONS)}", "reason")
        if ch.status != "succeeded" or not ch.captured:
            raise invalid(f"Charge {ch.id} has not been captured or did not succeed, so it cannot be refunded.",
                          "charge", "charge_not_refundable")
        left = ch.amount_captured - ch.amount_refunded
        if left <= 0:
            raise invalid(f"Charge {ch.id} has already been refunded.", "charge", "charge_already_refunded")
        amount = left if amount is None else amount
        if amount <= 0:
            raise invalid("Refund amount must be positive.", "amount", "amount_too_small")
        if amount > left:
            raise invalid(f"Refund amount (${amount / 100:.2f}) is greater than unrefunded amount on charge "
                          f"(${left / 100:.2f})", "amount", "amount_too_large")
        now = self.now()
        re_id = self.sid("re")
        txn = BalanceTransaction(id=self.sid("txn"), amount=-amount, currency=ch.currency, fee=0, net=-amount,
                                 type="refund", reporting_category="refund", source_id=re_id, status="available",
                                 description="REFUND FOR CHARGE" + (f" ({ch.description})" if ch.description else ""),
                                 available_on=now, created=now)
        self.db.balance_transactions[txn.id] = txn
        r = Refund(id=re_id, amount=amount, charge_id=ch.id, payment_intent_id=ch.payment_intent_id,
                   currency=ch.currency, status="succeeded", reason=reason, balance_transaction_id=txn.id,
                   metadata_json=self.merge_meta("{}", metadata), created=now)
        self.db.refunds[r.id] = r
        refunded = ch.amount_refunded + amount
        self.db.charges[ch.id] = ch = ch.model_copy(update={"amount_refunded": refunded,
                                                            "refunded": refunded >= ch.amount_captured})
        out = ser.refund(r, self.db)
        self.event("refund.created", out)
        self.event("charge.refunded", ser.charge(ch, self.db))
        return self.expand(out, expand)

    @api("stripe.refunds.list", "GET v1/refunds", "List refunds, newest first; filter by charge or payment_intent.",
         params={"charge": "ch_ id", "payment_intent": "pi_ id", **CHARGE_PAGE})
    def refunds_list(self, charge: str | None = None, payment_intent: str | None = None, limit: int | None = None,
                     starting_after: str | None = None, ending_before: str | None = None,
                     expand: list[str] | None = None, created: IntRange | None = None) -> dict[str, Any]:
        rows = [r for r in self.db.refunds.values() if (charge is None or r.charge_id == charge)
                and (payment_intent is None or r.payment_intent_id == payment_intent)]
        return self.page(rows, lambda r: ser.refund(r, self.db), "/v1/refunds", limit, starting_after, ending_before,
                         expand, created)

    @api("stripe.refunds.retrieve", "GET v1/refunds/{refund}", "Retrieve a refund.",
         params={"refund": "re_ id", "expand": ""})
    def refunds_retrieve(self, refund: str, expand: list[str] | None = None) -> dict[str, Any]:
        r = self.db.refunds.get(refund)
        if r is None:
            raise no_such("refund", refund)
        return self.expand(ser.refund(r, self.db), expand)
