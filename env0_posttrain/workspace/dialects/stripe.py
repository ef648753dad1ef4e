"""Stripe's REST conventions: form-encoded POST bodies, API keys and Idempotency-Key in the headers (checked by the
service's wire module), and Stripe's error object (`{"error": {"type", "message", "code", "param", ...}}`) with the
HTTP status Stripe gives each kind: 400 invalid request, 401 bad key, 402 card error, 403 missing permission, 404 no
such object."""

from __future__ import annotations

from typing import Any

from ..errors import ApiError
from .base import Dialect


class CommittedError(ApiError):
    """An error answer whose changes stay: a declined card leaves its failed Charge (and the PaymentIntent's
    `last_payment_error`) behind, as Stripe does, so the tool layer must not roll the call back."""

    commit = True


def stripe_error(status: int, message: str, type_: str = "invalid_request_error", *, code: str | None = None,
                 param: str | None = None, commit: bool = False, **extra: Any) -> ApiError:
    err: dict[str, Any] = {"message": message, "type": type_}
    if code:
        err["code"] = code
        err["doc_url"] = f"https://stripe.com/docs/error-codes/{code.replace('_', '-')}"
    if param:
        err["param"] = param
    err.update({k: v for k, v in extra.items() if v is not None})
    return (CommittedError if commit else ApiError)(status, {"error": err})


class Stripe(Dialect):
    family = "stripe"
    keyed_requests = True
    form_bodies = True

    def tool_name(self, service: str, method_id: str) -> str:
        return "_".join([service, *method_id.split(".")[1:]])

    def arg_error(self, message: str, param: str | None, code: str | None = None) -> ApiError:
        return stripe_error(400, message, param=param, code=code)

    def missing_arg(self, name: str) -> ApiError:
        return self.arg_error(f"Missing required param: {name}.", name, "parameter_missing")

    def unknown_arg(self, name: str) -> ApiError:
        return self.arg_error(f"Received unknown parameter: {name}", name, "parameter_unknown")

    def bad_value(self, kind: str | None, name: str, value: Any) -> ApiError:
        """Stripe's own wording and codes for a value of the wrong type."""
        if kind == "integer":
            return self.arg_error(f"Invalid integer: {str(value)[:60]}", name, "parameter_invalid_integer")
        if kind == "boolean":
            return self.arg_error(f"Invalid boolean: {str(value)[:60]}", name)
        if kind in ("object", "array"):
            return self.arg_error(f"Invalid {'hash' if kind == 'object' else 'array'}", name)
        return super().bad_value(kind, name, value)

    def internal_error(self) -> ApiError:
        return ApiError(500, {"error": {"type": "api_error", "message": "An unknown error occurred."}})


STRIPE = Stripe()
