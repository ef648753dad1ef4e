"""Stripe state: API keys, customers, payment methods, payment intents, charges, refunds, balance transactions,
events and stored idempotent responses.

Field names are env0's database columns (`customer_id`, `metadata_json`, `payment_method_id`), because env0's
Stripe verifiers read `/_admin/state` rows by those names; the API objects (serialize.py) are built from them
in Stripe's own shape. Amounts are integers in the currency's smallest unit, times are epoch seconds.
"""

from __future__ import annotations

from ...base import DB, Row, table


class ApiKey(Row):
    """A secret (`sk_test_`) key may do everything; a restricted (`rk_test_`) key only what `permissions` lists
    (`customers.read`, `charges.write`, ...; write implies read)."""
    id: str  # the key itself
    type: str = "secret"
    permissions: tuple[str, ...] = ()
    created: int = 0


class Customer(Row):
    id: str
    name: str | None = None
    email: str | None = None
    phone: str | None = None
    description: str | None = None
    invoice_prefix: str | None = None
    default_payment_method: str | None = None
    metadata_json: str = "{}"
    created: int
    deleted: bool | None = None


class PaymentMethod(Row):
    id: str
    type: str = "card"
    customer_id: str | None = None
    card_brand: str
    card_last4: str
    card_exp_month: int
    card_exp_year: int
    card_fingerprint: str
    card_funding: str = "credit"
    card_country: str = "US"
    card_cvc_check: str | None = "pass"
    # a test card's outcome travels with the card: confirming with it reproduces the decline
    failure_code: str | None = None
    decline_code: str | None = None
    failure_message: str | None = None
    authentication_required: bool | None = None
    metadata_json: str = "{}"
    created: int


class PaymentIntent(Row):
    id: str
    amount: int
    currency: str = "usd"
    status: str
    client_secret: str
    customer_id: str | None = None
    payment_method_id: str | None = None
    description: str | None = None
    capture_method: str = "automatic"
    confirmation_method: str = "automatic"
    amount_received: int = 0
    amount_capturable: int = 0
    latest_charge_id: str | None = None
    last_payment_error_json: str | None = None
    payment_method_types_json: str = '["card"]'
    receipt_email: str | None = None
    statement_descriptor: str | None = None
    setup_future_usage: str | None = None
    automatic_payment_methods_json: str | None = None
    canceled_at: int | None = None
    cancellation_reason: str | None = None
    metadata_json: str = "{}"
    created: int


class Charge(Row):
    id: str
    amount: int
    amount_captured: int = 0
    amount_refunded: int = 0
    currency: str = "usd"
    status: str  # succeeded, pending, failed
    paid: bool
    captured: bool
    refunded: bool = False
    customer_id: str | None = None
    payment_intent_id: str | None = None
    payment_method_id: str | None = None
    balance_transaction_id: str | None = None
    description: str | None = None
    failure_code: str | None = None
    failure_message: str | None = None
    receipt_url: str | None = None
    receipt_email: str | None = None
    statement_descriptor: str | None = None
    calculated_statement_descriptor: str | None = None
    outcome_json: str | None = None
    payment_method_details_json: str | None = None
    metadata_json: str = "{}"
    created: int


class Refund(Row):
    id: str
    amount: int
    charge_id: str
    payment_intent_id: str | None = None
    currency: str = "usd"
    status: str = "succeeded"
    reason: str | None = None
    balance_transaction_id: str | None = None
    metadata_json: str = "{}"
    created: int


class BalanceTransaction(Row):
    id: str
    amount: int
    currency: str = "usd"
    fee: int = 0
    net: int
    type: str  # charge, refund
    reporting_category: str
    source_id: str | None = None
    status: str = "pending"
    fee_details_json: str = "[]"
    description: str | None = None
    available_on: int
    created: int


class Event(Row):
    id: str
    type: str
    api_version: str | None = None
    data_json: str
    request_idempotency_key: str | None = None
    created: int


class IdempotentResponse(Row):
    """The first answer to a POST with an Idempotency-Key, replayed for a retry with the same parameters."""
    key: str
    fingerprint: str  # method, path and parameters of the first request
    status: int
    body_json: str
    created: int


class StripeDB(DB):
    api_keys: dict[str, ApiKey] = table()
    customers: dict[str, Customer] = table()
    payment_methods: dict[str, PaymentMethod] = table()
    payment_intents: dict[str, PaymentIntent] = table()
    charges: dict[str, Charge] = table()
    refunds: dict[str, Refund] = table()
    balance_transactions: dict[str, BalanceTransaction] = table()
    events: dict[str, Event] = table()
    idempotency: dict[str, IdempotentResponse] = table()
    auth_required: bool = False  # env0's AUTH_ENABLED=1: /v1 calls need an auth-service access token
