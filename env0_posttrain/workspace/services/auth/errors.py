"""The auth server's error bodies: RFC 6749 5.2 for OAuth endpoints (Google's token endpoint answers the same
shape), `{"detail": ...}` for env0's console."""

from __future__ import annotations

from ...errors import ApiError


def oauth_error(status: int, error: str, description: str) -> ApiError:
    return ApiError(status, {"error": error, "error_description": description})


def console_error(status: int, detail: str) -> ApiError:
    return ApiError(status, {"detail": detail})
