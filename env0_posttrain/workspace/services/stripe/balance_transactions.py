"""Stripe balanceTransactions: the ledger of charges and refunds."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...tool_args import IntRange
from . import serialize as ser
from .errors import no_such
from .state import CHARGE_PAGE, StripeState


class BalanceTransactions(StripeState):
    @api("stripe.balanceTransactions.list", "GET v1/balance_transactions", "List balance transactions (charges, "
         "refunds), newest first.", params={"type": "charge or refund", "source": "ch_ / re_ id", **CHARGE_PAGE})
    def balance_transactions_list(self, type: str | None = None, source: str | None = None, limit: int | None = None,
                                  starting_after: str | None = None, ending_before: str | None = None,
                                  expand: list[str] | None = None, created: IntRange | None = None,
                                  currency: str | None = None) -> dict[str, Any]:
        rows = [t for t in self.db.balance_transactions.values()
                if (type is None or t.type == type) and (source is None or t.source_id == source)
                and (currency is None or t.currency == currency.lower())]
        now = self.now()
        return self.page(rows, lambda t: ser.balance_transaction(t, self.db, now), "/v1/balance_transactions", limit,
                         starting_after, ending_before, expand, created)

    @api("stripe.balanceTransactions.retrieve", "GET v1/balance_transactions/{id}", "Retrieve a balance transaction.",
         params={"id": "txn_ id"})
    def balance_transactions_retrieve(self, id: str, expand: list[str] | None = None) -> dict[str, Any]:
        t = self.db.balance_transactions.get(id)
        if t is None:
            raise no_such("balance_transaction", id)
        return self.expand(ser.balance_transaction(t, self.db, self.now()), expand)
