"""What one does to a message besides posting it: pins.remove, reactions.remove / list, chat.getPermalink and
chat.postEphemeral. A mixin of `Slack` (uses `_chan`, `_index`, `message_json`, `me`).

Pins and reactions are fields of the message row (`pinned_to`, `reactions`), so snapshots, diffs and the
verifiers see them with the message. An ephemeral message is shown to one user once and never stored (as
in Slack: it is not in history), so chat.postEphemeral changes no state; the action log records the call.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import slack_error
from .data_model import tskey
from ...paging import page


def permalink(channel: str, ts: str) -> str:
    return f"https://env0.slack.com/archives/{channel}/p{ts.replace('.', '')}"


class MessageExtras:
    db: Any
    me: str

    def _message(self, channel: str, timestamp: str, *, member: bool = False) -> tuple[Any, Any]:
        c = self._chan(channel, member=member)  # type: ignore[attr-defined]
        m = self.db.messages.get(f"{c.id}/{timestamp}")
        if m is None:
            raise slack_error("message_not_found")
        return c, m

    def pin(self, channel: str, ts: str) -> Any:
        """Seeding helper: pin the message `ts` of `channel` (id or name) in that channel."""
        c = self.db.channels.get(channel) or self.channel_by_name(channel)  # type: ignore[attr-defined]
        m = self.db.messages[f"{c.id}/{ts}"]
        if c.id not in (m.pinned_to or ()):
            m = m.model_copy(update={"pinned_to": (m.pinned_to or ()) + (c.id,)})
            self.db.messages[f"{c.id}/{ts}"] = m
        return m

    def pinned(self, channel: str) -> list[Any]:
        """Verifier helper: the messages pinned in `channel` (id or name), oldest first."""
        c = self.db.channels.get(channel) or self.channel_by_name(channel)  # type: ignore[attr-defined]
        return [m for m in self.history(c.id) if c.id in (m.pinned_to or ())] if c else []  # type: ignore[attr-defined]

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

    @api("reactions.remove", "POST api/reactions.remove", "Remove your emoji reaction from a message.", writes=True,
         params={"channel": "", "timestamp": "message ts", "name": "emoji name, e.g. thumbsup"})
    def reactions_remove(self, name: str, channel: str | None = None, timestamp: str | None = None,
                         file: str | None = None) -> dict[str, Any]:
        if not channel or not timestamp:
            raise slack_error("no_item_specified")
        c, m = self._message(channel, timestamp)
        name = name.strip(":")
        rs = []
        found = False
        for r in m.reactions:
            if r.name == name and self.me in r.users:
                found = True
                users = tuple(u for u in r.users if u != self.me)
                if users:
                    rs.append(r.model_copy(update={"users": users}))
            else:
                rs.append(r)
        if not found:
            raise slack_error("no_reaction")
        self.db.messages[f"{c.id}/{m.ts}"] = m.model_copy(update={"reactions": tuple(rs)})
        return {"ok": True}

    @api("reactions.list", "POST api/reactions.list", "Messages a user (default: you) reacted to, newest first.",
         params={"user": "user id (default: you)", "limit": "", "cursor": ""})
    def reactions_list(self, user: str | None = None, full: bool | None = None, count: int | None = None,
                       limit: int | None = None, cursor: str | None = None, team_id: str | None = None) -> dict[str, Any]:
        uid = user or self.me
        if uid not in self.db.users:
            raise slack_error("user_not_found")
        threads = self._index()[1]  # type: ignore[attr-defined]
        items = []
        for m in sorted(self.db.messages.values(), key=lambda m: tskey(m.ts), reverse=True):
            if not any(uid in r.users for r in m.reactions):
                continue
            c = self.db.channels.get(m.channel)
            if c is None or ((c.is_private or c.is_im) and self.me not in c.members):
                continue
            items.append({"type": "message", "channel": c.id, "message": self.message_json(m, threads)})  # type: ignore[attr-defined]
        size = limit if limit and limit > 0 else (count if count and count > 0 else 100)
        chunk, nxt = page(items, cursor, min(size, 1000), slack=True)
        return {"ok": True, "items": chunk, "response_metadata": {"next_cursor": nxt or ""}}

    @api("chat.getPermalink", "POST api/chat.getPermalink", "A permanent link to a message.",
         params={"channel": "", "message_ts": "message ts"})
    def chat_getPermalink(self, channel: str, message_ts: str) -> dict[str, Any]:
        c, m = self._message(channel, message_ts)
        return {"ok": True, "channel": c.id, "permalink": permalink(c.id, m.ts)}

    @api("chat.postEphemeral", "POST api/chat.postEphemeral",
         "Show a message to one member of a channel, only this once (not stored in history).", writes=True,
         params={"channel": "", "user": "user id who sees it", "text": ""})
    def chat_postEphemeral(self, channel: str, user: str, text: str | None = None, thread_ts: str | None = None,
                           blocks: str | None = None, as_user: bool | None = None) -> dict[str, Any]:
        c = self._chan(channel)  # type: ignore[attr-defined]
        if c.is_archived:
            raise slack_error("is_archived")
        if self.me not in c.members:
            raise slack_error("not_in_channel")
        if user not in c.members:
            raise slack_error("user_not_in_channel")
        if not text or not text.strip():
            raise slack_error("no_text")
        if len(text) > 40000:
            raise slack_error("msg_too_long")
        n = len(self.ws.action_log) + 1  # type: ignore[attr-defined]  # nothing stored, so no id counter moves
        return {"ok": True, "message_ts": f"{int(self.ws.now.timestamp())}.{n % 1000000:06d}"}  # type: ignore[attr-defined]
