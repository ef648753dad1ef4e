"""The card charging path PaymentIntents and charges share. One path charges a card: `charge_card` makes the
Charge (and, when it succeeds, its balance transaction); a test card's decline leaves a failed Charge and
answers Stripe's 402 card_error, with the changes kept (a `CommittedError`)."""

from __future__ import annotations

import json
from typing import Any

from . import serialize as ser
from .data_model import BalanceTransaction, Charge, PaymentIntent, PaymentMethod
from .errors import invalid, stripe_error
from .state import StripeState

_MINIMUM = {"usd": 50, "eur": 50, "gbp": 30, "cad": 50, "aud": 50, "jpy": 50}
_DAY = 86_400


def fee_for_charge(amount: int) -> int:
    """Stripe's US card pricing: 2.9 % + 30 cents."""
    return int(round(amount * 0.029)) + 30


class Payments(StripeState):
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
