"""Stripe's stand-in for env0's private `env_0_stripe` package (env-0's Stripe seeders, `data/stripe_seed.py`, import
it: its models, test cards, ids, serializers and the default scenario's helpers), built on our Stripe rows: its
models are plain objects a seeder fills and mutates, and each becomes the row of `ROWS[obj.table]` afterwards
(tasks/env0/seed/stripe.py). The env0 face names this folder; tasks/env0/seed/env0_compat imports from it."""

from __future__ import annotations

from pathlib import Path

from .. import data_model as dm

HERE = Path(__file__).parent
ROWS: dict[str, type] = {"api_keys": dm.ApiKey, "customers": dm.Customer, "payment_methods": dm.PaymentMethod,
                         "payment_intents": dm.PaymentIntent, "charges": dm.Charge, "refunds": dm.Refund,
                         "balance_transactions": dm.BalanceTransaction, "events": dm.Event}
