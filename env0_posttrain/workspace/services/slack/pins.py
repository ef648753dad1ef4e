"""Slack pins.*: messages pinned to a conversation.

Pins are a field of the message row (`pinned_to`), so snapshots, diffs and the verifiers see them with the message.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import slack_error
from .state import SlackState


class Pins(SlackState):
    def pin(self, channel: str, ts: str) -> Any:
        """Seeding helper: pin the message `ts` of `channel` (id or name) in that channel."""
        c = self.db.channels.get(channel) or self.channel_by_name(channel)
        m = self.db.messages[f"{c.id}/{ts}"]
        if c.id not in (m.pinned_to or ()):
            m = m.model_copy(update={"pinned_to": (m.pinned_to or ()) + (c.id,)})
            self.db.messages[f"{c.id}/{ts}"] = m
        return m

    def pinned(self, channel: str) -> list[Any]:
        """Verifier helper: the messages pinned in `channel` (id or name), oldest first."""
        c = self.db.channels.get(channel) or self.channel_by_name(channel)
        return [m for m in self.history(c.id) if c.id in (m.pinned_to or ())] if c else []

    @api("pins.list", "POST api/pins.list", "Items pinned in a channel.", params={"channel": ""})
    def pins_list(self, channel: str) -> dict[str, Any]:
        c = self._chan(channel)
        threads = self._index()[1]
        items = [{"type": "message", "channel": c.id, "created": int(float(m.ts)), "created_by": m.user,
                  "message": {**self.message_json(m, threads), "pinned_to": list(m.pinned_to or ())}}
                 for m in self.history(c.id) if c.id in (m.pinned_to or ())]
        return {"ok": True, "items": items}

    @api("pins.add", "POST api/pins.add", "Pin a message to its channel.", writes=True,
         params={"channel": "", "timestamp": "message ts"})
    def pins_add(self, channel: str, timestamp: str) -> dict[str, Any]:
        c = self._chan(channel, member=True)
        m = self.db.messages.get(f"{c.id}/{timestamp}")
        if m is None:
            raise slack_error("message_not_found")
        if c.id in (m.pinned_to or ()):
            raise slack_error("already_pinned")
        self.db.messages[f"{c.id}/{m.ts}"] = m.model_copy(update={"pinned_to": (m.pinned_to or ()) + (c.id,)})
        return {"ok": True}

    @api("pins.remove", "POST api/pins.remove", "Un-pin a message from its channel.", writes=True,
         params={"channel": "", "timestamp": "message ts"})
    def pins_remove(self, channel: str, timestamp: str | None = None) -> dict[str, Any]:
        if not timestamp:
            raise slack_error("no_item_specified")
        c, m = self._message(channel, timestamp, member=True)
        if c.id not in (m.pinned_to or ()):
            raise slack_error("no_pin")
        rest = tuple(x for x in m.pinned_to if x != c.id)
        self.db.messages[f"{c.id}/{m.ts}"] = m.model_copy(update={"pinned_to": rest or None})
        return {"ok": True}
