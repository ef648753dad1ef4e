"""Stripe balance.retrieve: available and pending funds."""

from __future__ import annotations

from typing import Any

from ...base import api
from . import serialize as ser
from .state import StripeState


class Balance(StripeState):
    @api("stripe.balance.retrieve", "GET v1/balance", "The account's balance: available and pending funds per "
         "currency.")
    def balance_retrieve(self, expand: list[str] | None = None) -> dict[str, Any]:
        return self.expand(ser.balance(self.db, self.now()), expand)
