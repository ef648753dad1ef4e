"""env0's Stripe tables as plain objects: a seeder builds them with keyword arguments, adds them to its `db`
and may set attributes afterwards (`customer.default_payment_method = pm.id`); unset columns read as None.
seed/stripe.py turns what was added into our rows once the seeder returns."""

from __future__ import annotations

from typing import Any


class _Model:
    table = ""

    def __init__(self, **columns: Any):
        self.__dict__.update(columns)

    def __getattr__(self, name: str) -> Any:  # an unset column, as an ORM reads it
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    def columns(self) -> dict[str, Any]:
        return dict(self.__dict__)


class ApiKey(_Model):
    table = "api_keys"


class Customer(_Model):
    table = "customers"


class PaymentMethod(_Model):
    table = "payment_methods"


class PaymentIntent(_Model):
    table = "payment_intents"


class Charge(_Model):
    table = "charges"


class Refund(_Model):
    table = "refunds"


class BalanceTransaction(_Model):
    table = "balance_transactions"


class Event(_Model):
    table = "events"
