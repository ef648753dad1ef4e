"""Rows -> Stripe's API objects (`"object": "customer"`, `"charge"`, ...), with the fields Stripe returns.

Every function takes the row and the DB (for the pieces a Stripe object embeds from others: a charge's
refunds, a PaymentIntent's last error); none writes.
"""

from __future__ import annotations

import json
from typing import Any

from .data_model import BalanceTransaction, Charge, Customer, PaymentIntent, PaymentMethod, Refund, StripeDB


def meta(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    # Stripe's metadata values are strings (env0's seeders sometimes store numbers)
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _loads(raw: str | None) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def customer(c: Customer, db: StripeDB) -> dict[str, Any]:
    if c.deleted:
        return {"id": c.id, "object": "customer", "deleted": True}
    return {"id": c.id, "object": "customer", "address": None, "balance": 0, "created": c.created, "currency": None,
            "default_source": None, "delinquent": False, "description": c.description, "discount": None,
            "email": c.email, "invoice_prefix": c.invoice_prefix,
            "invoice_settings": {"custom_fields": None, "default_payment_method": c.default_payment_method,
                                 "footer": None, "rendering_options": None},
            "livemode": False, "metadata": meta(c.metadata_json), "name": c.name, "next_invoice_sequence": 1,
            "phone": c.phone, "preferred_locales": [], "shipping": None, "tax_exempt": "none",
            "test_clock": None}


def card(pm: PaymentMethod) -> dict[str, Any]:
    return {"brand": pm.card_brand, "checks": {"address_line1_check": None, "address_postal_code_check": None,
                                               "cvc_check": pm.card_cvc_check},
            "country": pm.card_country, "display_brand": pm.card_brand, "exp_month": pm.card_exp_month,
            "exp_year": pm.card_exp_year, "fingerprint": pm.card_fingerprint, "funding": pm.card_funding,
            "generated_from": None, "last4": pm.card_last4, "networks": {"available": [pm.card_brand], "preferred": None},
            "three_d_secure_usage": {"supported": True}, "wallet": None}


def payment_method(pm: PaymentMethod, db: StripeDB) -> dict[str, Any]:
    return {"id": pm.id, "object": "payment_method", "allow_redisplay": "unspecified",
            "billing_details": {"address": None, "email": None, "name": None, "phone": None},
            "card": card(pm), "created": pm.created, "customer": pm.customer_id, "livemode": False,
            "metadata": meta(pm.metadata_json), "type": pm.type}


def payment_method_details(pm: PaymentMethod | None) -> dict[str, Any] | None:
    if pm is None:
        return None
    c = card(pm)
    return {"card": {**{k: c[k] for k in ("brand", "checks", "country", "exp_month", "exp_year", "fingerprint",
                                          "funding", "last4")},
                     "installments": None, "mandate": None, "network": pm.card_brand, "three_d_secure": None,
                     "wallet": None}, "type": "card"}


def charge(ch: Charge, db: StripeDB) -> dict[str, Any]:
    refunds = sorted((r for r in db.refunds.values() if r.charge_id == ch.id), key=lambda r: (-r.created, r.id))
    pm = db.payment_methods.get(ch.payment_method_id or "")
    return {"id": ch.id, "object": "charge", "amount": ch.amount, "amount_captured": ch.amount_captured,
            "amount_refunded": ch.amount_refunded, "application": None, "application_fee": None,
            "balance_transaction": ch.balance_transaction_id, "billing_details": {
                "address": None, "email": None, "name": None, "phone": None},
            "calculated_statement_descriptor": ch.calculated_statement_descriptor, "captured": ch.captured,
            "created": ch.created, "currency": ch.currency, "customer": ch.customer_id, "description": ch.description,
            "disputed": False, "failure_balance_transaction": None, "failure_code": ch.failure_code,
            "failure_message": ch.failure_message, "fraud_details": {}, "livemode": False,
            "metadata": meta(ch.metadata_json), "outcome": _loads(ch.outcome_json), "paid": ch.paid,
            "payment_intent": ch.payment_intent_id, "payment_method": ch.payment_method_id,
            "payment_method_details": _loads(ch.payment_method_details_json) or payment_method_details(pm),
            "receipt_email": ch.receipt_email, "receipt_url": ch.receipt_url, "refunded": ch.refunded,
            "refunds": {"object": "list", "data": [refund(r, db) for r in refunds[:10]], "has_more": len(refunds) > 10,
                        "total_count": len(refunds), "url": f"/v1/charges/{ch.id}/refunds"},
            "review": None, "shipping": None, "source": None, "statement_descriptor": ch.statement_descriptor, "status": ch.status}


def payment_intent(pi: PaymentIntent, db: StripeDB) -> dict[str, Any]:
    return {"id": pi.id, "object": "payment_intent", "amount": pi.amount,
            "amount_capturable": pi.amount_capturable, "amount_received": pi.amount_received,
            "automatic_payment_methods": _loads(pi.automatic_payment_methods_json), "canceled_at": pi.canceled_at,
            "cancellation_reason": pi.cancellation_reason, "capture_method": pi.capture_method,
            "client_secret": pi.client_secret, "confirmation_method": pi.confirmation_method, "created": pi.created,
            "currency": pi.currency, "customer": pi.customer_id, "description": pi.description,
            "last_payment_error": _loads(pi.last_payment_error_json), "latest_charge": pi.latest_charge_id,
            "livemode": False, "metadata": meta(pi.metadata_json), "next_action": None,
            "payment_method": pi.payment_method_id, "payment_method_types": _loads(pi.payment_method_types_json) or ["card"],
            "receipt_email": pi.receipt_email, "setup_future_usage": pi.setup_future_usage, "shipping": None,
            "statement_descriptor": pi.statement_descriptor, "status": pi.status}


def refund(r: Refund, db: StripeDB) -> dict[str, Any]:
    return {"id": r.id, "object": "refund", "amount": r.amount, "balance_transaction": r.balance_transaction_id,
            "charge": r.charge_id, "created": r.created, "currency": r.currency, "destination_details": None,
            "metadata": meta(r.metadata_json), "payment_intent": r.payment_intent_id, "reason": r.reason,
            "receipt_number": None, "source_transfer_reversal": None, "status": r.status, "transfer_reversal": None}


def balance_transaction(t: BalanceTransaction, db: StripeDB, now: int) -> dict[str, Any]:
    return {"id": t.id, "object": "balance_transaction", "amount": t.amount, "available_on": t.available_on,
            "created": t.created, "currency": t.currency, "description": t.description, "exchange_rate": None,
            "fee": t.fee, "fee_details": _loads(t.fee_details_json) or [], "net": t.net,
            "reporting_category": t.reporting_category, "source": t.source_id,
            "status": "available" if available(t, now) else "pending", "type": t.type}


def available(t: BalanceTransaction, now: int) -> bool:
    return t.status == "available" or t.available_on <= now


def balance(db: StripeDB, now: int) -> dict[str, Any]:
    """Available and pending funds per currency: the sum of the balance transactions' net amounts."""
    totals: dict[tuple[str, str], int] = {}
    for t in db.balance_transactions.values():
        key = ("available" if available(t, now) else "pending", t.currency)
        totals[key] = totals.get(key, 0) + t.net
    currencies = sorted({c for _, c in totals} or {"usd"})

    def part(kind: str) -> list[dict[str, Any]]:
        return [{"amount": totals.get((kind, c), 0), "currency": c, "source_types": {"card": totals.get((kind, c), 0)}}
                for c in currencies]

    return {"object": "balance", "available": part("available"), "connect_reserved": [
        {"amount": 0, "currency": c} for c in currencies], "livemode": False, "pending": part("pending")}


SERIALIZERS = {"customers": customer, "payment_methods": payment_method, "payment_intents": payment_intent,
               "charges": charge, "refunds": refund}
