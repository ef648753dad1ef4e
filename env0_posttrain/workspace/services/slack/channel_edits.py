"""Channel housekeeping: conversations.unarchive / rename / setTopic / setPurpose / leave.

A mixin of `Slack` (uses `_chan`, `channel_json`, `me`). Rules follow Slack's method pages: only the
channel's creator or an admin renames it; topic and purpose are capped at 250 characters; #general
cannot be left; the last member of a private channel cannot leave it.
"""

from __future__ import annotations

import re
from typing import Any

from ...base import api
from ...errors import slack_error

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
_MAX_TOPIC = 250


class ChannelEdits:
    db: Any
    me: str

    def _editable(self, channel: str) -> Any:
        c = self._chan(channel, member=True)  # type: ignore[attr-defined]
        if c.is_im:
            raise slack_error("method_not_supported_for_channel_type")
        if c.is_archived:
            raise slack_error("is_archived")
        return c

    @api("conversations.unarchive", "POST api/conversations.unarchive", "Unarchive a channel.", writes=True,
         params={"channel": ""})
    def conversations_unarchive(self, channel: str) -> dict[str, Any]:
        c = self._chan(channel)  # type: ignore[attr-defined]
        if c.is_im:
            raise slack_error("method_not_supported_for_channel_type")
        if not c.is_archived:
            raise slack_error("not_archived")
        self.db.channels[c.id] = c.model_copy(update={"is_archived": False})
        return {"ok": True}

    @api("conversations.rename", "POST api/conversations.rename", "Rename a channel (its creator or an admin).",
         writes=True, params={"channel": "", "name": "new name: lowercase, no spaces"})
    def conversations_rename(self, channel: str, name: str) -> dict[str, Any]:
        c = self._editable(channel)
        me = self.db.users.get(self.me)
        if c.creator != self.me and not (me and me.is_admin):
            raise slack_error("not_authorized")
        name = name.strip().lstrip("#")
        if not name:
            raise slack_error("invalid_name_required")
        if not _NAME.match(name):
            raise slack_error("invalid_name_specials" if name.lower() == name else "invalid_name")
        if any(x.name == name and x.id != c.id for x in self.db.channels.values()):
            raise slack_error("name_taken")
        c = c.model_copy(update={"name": name})
        self.db.channels[c.id] = c
        return {"ok": True, "channel": self.channel_json(c)}  # type: ignore[attr-defined]

    def _set_text(self, channel: str, field: str, value: str) -> dict[str, Any]:
        c = self._editable(channel)
        if len(value) > _MAX_TOPIC:
            raise slack_error("too_long")
        c = c.model_copy(update={field: value})
        self.db.channels[c.id] = c
        return {"ok": True, "channel": self.channel_json(c)}  # type: ignore[attr-defined]

    @api("conversations.setTopic", "POST api/conversations.setTopic", "Set a channel's topic.", writes=True,
         params={"channel": "", "topic": "up to 250 characters"})
    def conversations_setTopic(self, channel: str, topic: str) -> dict[str, Any]:
        return self._set_text(channel, "topic", topic)

    @api("conversations.setPurpose", "POST api/conversations.setPurpose", "Set a channel's purpose (description).",
         writes=True, params={"channel": "", "purpose": "up to 250 characters"})
    def conversations_setPurpose(self, channel: str, purpose: str) -> dict[str, Any]:
        return self._set_text(channel, "purpose", purpose)

    @api("conversations.leave", "POST api/conversations.leave", "Leave a channel.", writes=True,
         params={"channel": ""})
    def conversations_leave(self, channel: str) -> dict[str, Any]:
        c = self._chan(channel)  # type: ignore[attr-defined]
        if c.is_im:
            raise slack_error("method_not_supported_for_channel_type")
        if c.is_archived:
            raise slack_error("is_archived")
        if c.is_general:
            raise slack_error("cant_leave_general")
        if self.me not in c.members:
            return {"ok": False, "not_in_channel": True}  # Slack: no error, just this flag
        if c.is_private and len(c.members) == 1:
            raise slack_error("last_member")
        self.db.channels[c.id] = c.model_copy(update={"members": tuple(m for m in c.members if m != self.me)})
        return {"ok": True}
