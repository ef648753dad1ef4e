"""Stripe-shaped ids drawn from the seeder's rng (`cus_` + 24 characters, as env0 makes them)."""

from __future__ import annotations

import random

ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def generate_id(prefix: str, rng: random.Random | None = None, length: int = 24) -> str:
    r = rng or random.Random()
    return f"{prefix}_" + "".join(r.choice(ALNUM) for _ in range(length))


def client_secret_for(pi_id: str, rng: random.Random | None = None) -> str:
    r = rng or random.Random()
    return f"{pi_id}_secret_" + "".join(r.choice(ALNUM) for _ in range(25))
