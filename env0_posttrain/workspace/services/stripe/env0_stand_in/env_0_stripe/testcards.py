"""`testcards.spec_for_number`: Stripe's test card numbers and the outcome each produces."""

from env0_posttrain.workspace.services.stripe.cards import spec_for_number

__all__ = ["spec_for_number"]
