"""Stripe's error object (`{"error": {"type", "message", "code", "param", ...}}`) as the dialect, the handlers and the
wire module raise it."""

from __future__ import annotations

from typing import Any

from ...errors import ApiError


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
