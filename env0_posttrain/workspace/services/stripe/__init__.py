"""The Stripe API service (customers, payment methods and intents, charges, refunds, balance) and env0's mock-stripe
face of it."""

from ..descriptor import Env0Face, ServiceDescriptor
from . import env0_stand_in
from .dialect import STRIPE
from .env0_needles import plant
from .env0_shape import stripe_diff, stripe_state
from .toolkit import Stripe

SERVICE = ServiceDescriptor(
    Stripe, dialect=STRIPE,
    env0=Env0Face("stripe", 9007, ("MOCK_STRIPE_URL", "STRIPE_URL"), state=stripe_state, diff=stripe_diff,
                  fill="STRIPE_FILL_CONFIG", stand_ins=env0_stand_in.HERE, seed_rows=env0_stand_in.ROWS,
                  plant=plant, plant_order=50))

__all__ = ["Stripe", "SERVICE"]
