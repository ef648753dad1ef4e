"""Gmail's departures from Google's REST conventions: its methods sit under `users` (gmail.users.messages.list is
the tool gmail_messages_list), and an upload's bytes are the RFC 822 message itself, not media beside a body."""

from __future__ import annotations

import base64
from typing import Any

from ...dialects.google import Google


class GmailDialect(Google):
    def tool_name(self, service: str, method_id: str) -> str:
        rest = method_id.split(".")[1:]
        if rest[:1] == ["users"] and len(rest) >= 2:
            rest = rest[1:]
        return "_".join([service, *rest])

    def upload_body(self, tool: str, service: str, meta: dict[str, Any], media: bytes) -> dict[str, Any] | None:
        inner = dict(meta.get("message", meta)) if tool.startswith("gmail_drafts") else dict(meta)  # drafts wrap it
        inner["raw"] = base64.urlsafe_b64encode(media).decode()
        return {"message": inner} if tool.startswith("gmail_drafts_create") else inner


GMAIL = GmailDialect()
