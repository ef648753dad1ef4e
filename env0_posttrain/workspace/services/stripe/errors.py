"""Stripe's errors as the handlers and the wire module raise them (the error object itself: dialects/stripe.py)."""

from __future__ import annotations

from typing import Any

from ...dialects.stripe import stripe_error
from ...errors import ApiError


def invalid(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return stripe_error(400, message, param=param, code=code)


def missing(param: str) -> ApiError:
    return stripe_error(400, f"Missing required param: {param}.", code="parameter_missing", param=param)


def no_such(kind: str, ident: str, param: str | None = None) -> ApiError:
    """A path id that names nothing is a 404; an id passed as a parameter is a 400 naming the parameter."""
    return stripe_error(404 if param is None else 400, f"No such {kind}: '{ident}'", code="resource_missing",
                        param=param or "id")


def unauthenticated(message: str) -> ApiError:
    return stripe_error(401, message)


def permission_denied(message: str) -> ApiError:
    return stripe_error(403, message, code="secret_key_required" if "secret key" in message else None)


def idempotency_mismatch(key: str) -> ApiError:
    return stripe_error(400, "Keys for idempotent requests can only be used with the same parameters they were first "
                        f"used with. Try using a key other than '{key}' if you meant to execute a different request.",
                        "idempotency_error")


def unknown_route(method: str, path: str) -> dict[str, Any]:
    return {"error": {"message": f"Unrecognized request URL ({method}: {path}). Please see https://stripe.com/docs or "
                                 "we can help at https://support.stripe.com/.", "type": "invalid_request_error"}}
