"""The default scenario's construction helpers that env-0's task seeders reuse (`_make_customer`,
`_make_attached_card`, `_make_succeeded_payment`, `ANCHOR`, `_DAY`), and the `default` scenario itself
(Ada Lovelace, Grace Hopper, Alan Turing with cards and a history of succeeded payments).

Signatures and return values follow the seeders' calls: a customer, an attached card, and a
(PaymentIntent, Charge) pair whose charge has its balance transaction.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ..api.ledger import fee_for_charge
from ..api.serializers import charge_to_dict, customer_to_dict, payment_intent_to_dict, payment_method_to_dict
from ..ids import client_secret_for, generate_id
from ..models import BalanceTransaction, Charge, Customer, Event, PaymentIntent, PaymentMethod
from ..testcards import spec_for_number

ANCHOR = 1_780_000_000  # env0's fixed clock for seeded `created` times
_DAY = 86_400
API_VERSION = "2026-05-27.dahlia"

# the default scenario: (customer id, name, email, card, [(amount, description, days before ANCHOR)])
# Ada's id is the one env0's deterministic default seed gives her (packages name it outright).
DEFAULT_CUSTOMERS = [
    ("cus_OhbVrpoiVgRV5IfLBcbfnoGM", "Ada Lovelace", "ada@example.com", "4242424242424242",
     [(4900, "Analytical Engine subscription", 45), (4900, "Analytical Engine subscription", 15)]),
    (None, "Grace Hopper", "grace@example.com", "5555555555554444",
     [(12000, "COBOL consulting", 30), (2500, "Compiler add-on", 9)]),
    (None, "Alan Turing", "alan@example.com", "378282246310005", [(9900, "Bombe maintenance", 20)]),
]


def _event(db: Any, rng: random.Random, kind: str, obj: dict, created: int) -> None:
    db.add(Event(id=generate_id("evt", rng=rng), type=kind, api_version=API_VERSION,
                 data_json=json.dumps({"object": obj}), request_idempotency_key=None, created=created))


def _make_customer(db: Any, rng: random.Random, fake: Any = None, *, name: str, email: str, created: int,
                   metadata: dict | None = None, id: str | None = None, phone: str | None = None,
                   description: str | None = None) -> Customer:
    c = Customer(id=id or generate_id("cus", rng=rng), name=name, email=email, phone=phone, description=description,
                 invoice_prefix="".join(rng.choice("ABCDEFGH0123456789") for _ in range(8)),
                 metadata_json=json.dumps(metadata or {}), created=created)
    db.add(c)
    _event(db, rng, "customer.created", customer_to_dict(c), created)
    return c


def _make_attached_card(db: Any, rng: random.Random, customer: Any, number: str, created: int,
                        metadata: dict | None = None) -> PaymentMethod:
    spec = spec_for_number(number)
    pm = PaymentMethod(id=generate_id("pm", rng=rng), type="card", customer_id=customer.id, card_brand=spec["brand"],
                       card_last4=spec["last4"], card_exp_month=rng.randint(1, 12), card_exp_year=rng.randint(2030, 2036),
                       card_fingerprint=spec["fingerprint"], card_funding=spec["funding"],
                       card_country=spec["country"], card_cvc_check="pass", failure_code=spec["failure_code"],
                       decline_code=spec["decline_code"], failure_message=spec["failure_message"],
                       authentication_required=spec["authentication_required"],
                       metadata_json=json.dumps(metadata or {}), created=created)
    db.add(pm)
    _event(db, rng, "payment_method.attached", payment_method_to_dict(pm), created)
    return pm


def _make_succeeded_payment(db: Any, rng: random.Random, customer: Any, pm: Any, *, amount: int, description: str,
                            created: int, captured: bool = True, currency: str = "usd",
                            metadata: dict | None = None) -> tuple[PaymentIntent, Charge]:
    """A PaymentIntent and its succeeded Charge (captured: with the charge's balance transaction)."""
    meta = json.dumps(metadata or {})
    pi_id = generate_id("pi", rng=rng)
    pi = PaymentIntent(id=pi_id, amount=amount, currency=currency,
                       status="succeeded" if captured else "requires_capture",
                       client_secret=client_secret_for(pi_id, rng=rng), customer_id=customer.id,
                       payment_method_id=pm.id, description=description,
                       capture_method="automatic" if captured else "manual",
                       amount_received=amount if captured else 0, amount_capturable=0 if captured else amount,
                       payment_method_types_json='["card"]', metadata_json=meta, created=created)
    db.add(pi)
    _event(db, rng, "payment_intent.created", payment_intent_to_dict(pi), created)
    ch_id = generate_id("ch", rng=rng)
    ch = Charge(id=ch_id, amount=amount, amount_captured=amount if captured else 0, amount_refunded=0,
                currency=currency, status="succeeded", paid=True, captured=captured, customer_id=customer.id,
                payment_intent_id=pi.id, payment_method_id=pm.id, description=description,
                receipt_url=f"https://pay.stripe.com/receipts/payment/{ch_id}", calculated_statement_descriptor="Stripe",
                outcome_json=json.dumps({"network_status": "approved_by_network", "reason": None, "risk_level": "normal",
                                         "risk_score": rng.randint(5, 64), "seller_message": "Payment complete.",
                                         "type": "authorized"}),
                metadata_json=meta, created=created)
    db.add(ch)
    pi.latest_charge_id = ch.id
    if captured:
        fee = fee_for_charge(amount)
        txn = BalanceTransaction(id=generate_id("txn", rng=rng), amount=amount, currency=currency, fee=fee,
                                 net=amount - fee, type="charge", reporting_category="charge", source_id=ch.id,
                                 status="available", fee_details_json=json.dumps([{
                                     "amount": fee, "application": None, "currency": currency,
                                     "description": "Stripe processing fees", "type": "stripe_fee"}]),
                                 available_on=created, created=created)
        db.add(txn)
        ch.balance_transaction_id = txn.id
    _event(db, rng, "charge.succeeded", charge_to_dict(ch), created)
    if captured:
        _event(db, rng, "payment_intent.succeeded", payment_intent_to_dict(pi), created)
    return pi, ch


def seed_default(db: Any, rng: random.Random, fake: Any = None) -> dict:
    """stripe's `default` scenario: three customers, a card each (the card on file) and their past payments."""
    charges = 0
    for i, (cid, name, email, number, history) in enumerate(DEFAULT_CUSTOMERS):
        created = ANCHOR - (90 - 10 * i) * _DAY
        c = _make_customer(db, rng, fake, name=name, email=email, created=created, id=cid)
        pm = _make_attached_card(db, rng, c, number, created)
        c.default_payment_method = pm.id
        for amount, description, days in history:
            _make_succeeded_payment(db, rng, c, pm, amount=amount, description=description,
                                    created=ANCHOR - days * _DAY)
            charges += 1
    return {"customers": len(DEFAULT_CUSTOMERS), "charges": charges}
