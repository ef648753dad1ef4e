"""Google's REST conventions: tools named service_resource_method, unknown query names refused, Google's error body."""

from __future__ import annotations

import base64
from typing import Any

from ..errors import ApiError, google_error
from .base import Dialect


class Google(Dialect):
    family = "google"

    def tool_name(self, service: str, method_id: str) -> str:
        rest = method_id.split(".")[1:]
        if service == "gmail" and rest[:1] == ["users"] and len(rest) >= 2:  # gmail.users.messages.list -> messages
            rest = rest[1:]
        return "_".join([service, *rest])

    def arg_error(self, message: str, param: str | None, code: str | None = None) -> ApiError:
        return google_error(400, message, "invalid" if param else "badRequest", param)

    def missing_arg(self, name: str) -> ApiError:
        return google_error(400, f"Required parameter: {name}", "required", name)

    def internal_error(self) -> ApiError:
        return google_error(500, "Internal error encountered.", "backendError")

    def upload_body(self, tool: str, service: str, meta: dict[str, Any], media: bytes) -> dict[str, Any] | None:
        if service != "gmail":  # Drive: the bytes are the file's content, the metadata its body
            return None
        # Gmail: the bytes are the RFC 822 message itself (drafts wrap it in {"message": ...})
        inner = dict(meta.get("message", meta)) if tool.startswith("gmail_drafts") else dict(meta)
        inner["raw"] = base64.urlsafe_b64encode(media).decode()
        return {"message": inner} if tool.startswith("gmail_drafts_create") else inner


GOOGLE = Google()
