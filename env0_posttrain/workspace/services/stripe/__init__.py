from .toolkit import Stripe

__all__ = ["Stripe"]
