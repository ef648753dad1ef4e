"""API error bodies, raised by handlers and returned verbatim to the agent or the HTTP client.

Handlers validate before they mutate, so raising an ApiError always leaves state untouched.
"""

from __future__ import annotations

from typing import Any

_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    412: "FAILED_PRECONDITION",
    413: "INVALID_ARGUMENT",  # what Google says of an oversized payload (it answers 400; the mock says 413)
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
}


class ApiError(Exception):
    """An error with the exact body and HTTP status the real API would return."""

    def __init__(self, status: int, body: dict[str, Any]):
        super().__init__(body)
        self.status = status
        self.body = body


def google_error(code: int, message: str, reason: str, location: str | None = None) -> ApiError:
    err: dict[str, Any] = {"message": message, "domain": "global", "reason": reason}
    if location:
        err["location"] = location
        err["locationType"] = "parameter"
    body = {"error": {"code": code, "message": message, "errors": [err], "status": _GOOGLE_STATUS.get(code, "UNKNOWN")}}
    return ApiError(code, body)


def bad_request(message: str, reason: str = "badRequest", location: str | None = None) -> ApiError:
    return google_error(400, message, reason, location)


def required(param: str) -> ApiError:
    return google_error(400, f"Required parameter: {param}", "required", param)


def not_found(message: str = "Requested entity was not found.", location: str | None = None) -> ApiError:
    return google_error(404, message, "notFound", location)


def forbidden(message: str, reason: str = "forbidden") -> ApiError:
    return google_error(403, message, reason)


def conflict(message: str = "Entity already exists.", reason: str = "duplicate") -> ApiError:
    return google_error(409, message, reason)


def slack_error(error: str, **extra: Any) -> ApiError:
    """Slack reports logical errors with HTTP 200 and ok=false."""
    return ApiError(200, {"ok": False, "error": error, **extra})
