"""`fee_for_charge`: Stripe's card fee (2.9 % + 30 cents)."""

from env0_posttrain.workspace.services.stripe.payments import fee_for_charge

__all__ = ["fee_for_charge"]
