"""Google's REST conventions: tools named service_resource_method, unknown query names refused, Google's error body,
and entity versions: a resource's `etag` against `If-Match` / `If-None-Match` (412 conditionNotMet, 304)."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ApiError, google_error
from .base import Dialect


class Google(Dialect):
    family = "google"

    def tool_name(self, service: str, method_id: str) -> str:
        return "_".join([service, *method_id.split(".")[1:]])

    def arg_error(self, message: str, param: str | None, code: str | None = None) -> ApiError:
        return google_error(400, message, "invalid" if param else "badRequest", param)

    def missing_arg(self, name: str) -> ApiError:
        return google_error(400, f"Required parameter: {name}", "required", name)

    def internal_error(self) -> ApiError:
        return google_error(500, "Internal error encountered.", "backendError")

    def precondition(self, writes: bool, headers: dict[str, str], current: Callable[[], str | None]) -> ApiError | None:
        if_match, if_none = headers.get("if-match"), headers.get("if-none-match")
        if not writes or (if_match is None and if_none is None):
            return None
        tag = current()
        if tag is None:  # no such resource (the write answers its own 404) or one without a version
            return None
        if if_match is not None and not _matches(if_match, tag):
            return _condition_not_met("If-Match")
        if if_none is not None and _matches(if_none, tag):
            return _condition_not_met("If-None-Match")
        return None

    def answered_conditionally(self, headers: dict[str, str], body: Any) -> ApiError | None:
        tag = body.get("etag") if isinstance(body, dict) else None
        if not isinstance(tag, str):
            return None
        if "if-match" in headers and not _matches(headers["if-match"], tag):
            return _condition_not_met("If-Match")
        if "if-none-match" in headers and _matches(headers["if-none-match"], tag):
            return ApiError(304, {})
        return None


def _matches(header: str, tag: str) -> bool:
    """RFC 9110 entity-tag list: `*`, or any listed tag (weak `W/` tags compare by their opaque part)."""
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or tag.removeprefix("W/") in tags


def _condition_not_met(header: str) -> ApiError:
    """Google's 412 for a failed precondition header (the Calendar and Directory APIs' wording)."""
    err = {"domain": "global", "reason": "conditionNotMet", "message": "Precondition Failed",
           "locationType": "header", "location": header}
    return ApiError(412, {"error": {"code": 412, "message": "Precondition Failed", "errors": [err],
                                    "status": "FAILED_PRECONDITION"}})


GOOGLE = Google()
