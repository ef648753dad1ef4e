"""Stripe's REST API (v1), assembled from one mixin per resource (customers, paymentMethods, charges,
paymentIntents, refunds, balance, balanceTransactions, events) over the state mechanics (state.py), the card
charging path (payments.py) and search (search.py).

Handlers take Stripe's parameters (form fields decoded to nested dicts by wire.py, or an agent's JSON) and
answer Stripe's objects; a bad request raises Stripe's error object. Keys, permissions and Idempotency-Key
belong to the HTTP request, so wire.py checks them before a handler runs.
"""

from __future__ import annotations

from .balance import Balance
from .balance_transactions import BalanceTransactions
from .charges import Charges
from .customers import Customers
from .events import Events
from .payment_intents import PaymentIntents
from .payment_methods import PaymentMethods
from .refunds import Refunds


class Stripe(Customers, PaymentMethods, Charges, PaymentIntents, Refunds, Balance, BalanceTransactions, Events):
    pass
