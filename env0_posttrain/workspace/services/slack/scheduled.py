"""Scheduled messages: chat.scheduleMessage, chat.scheduledMessages.list, chat.deleteScheduledMessage.

A mixin of `Slack`. The workspace clock is frozen, so a scheduled message stays pending (listed, deletable)
and never posts; verifiers read `db.scheduled`. Slack's limits: `post_at` in the future and at most 120 days
ahead; ids look like "Q1298393284".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import DIGITS, api
from ...errors import slack_error
from ...paging import page
from .blocks import checked_blocks, checked_text
from .data_model import ScheduledMessage
from .state import SlackState

_MAX_AHEAD = 120 * 24 * 3600


def _post_at(value: str) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        raise slack_error("invalid_time") from None


class Scheduled(SlackState):
    @api("chat.scheduleMessage", "POST api/chat.scheduleMessage",
         "Schedule a message to post in a channel later (post_at: Unix time).", writes=True,
         params={"channel": "channel id or #name", "post_at": "Unix timestamp, in the future", "text": "",
                 "thread_ts": "reply in thread"})
    def chat_scheduleMessage(self, channel: str, post_at: str, text: str | None = None, thread_ts: str | None = None,
                             blocks: str | None = None, unfurl_links: bool | None = None,
                             as_user: bool | None = None, reply_broadcast: bool | None = None) -> dict[str, Any]:
        c = self._chan(channel)
        if c.is_archived:
            raise slack_error("is_archived")
        if not c.is_im and self.me not in c.members:
            raise slack_error("not_in_channel")
        when = _post_at(post_at)
        now = int(self.ws.now.timestamp())
        if when <= now:
            raise slack_error("time_in_past")
        if when > now + _MAX_AHEAD:
            raise slack_error("time_too_far")
        stored = checked_blocks(blocks)
        text = checked_text(text, stored)
        sid = "Q" + self.new_id("scheduled", DIGITS, 10)
        row = ScheduledMessage(id=sid, channel=c.id, post_at=when, date_created=now, text=text, thread_ts=thread_ts,
                               blocks=stored or None)
        self.db.scheduled[sid] = row
        return {"ok": True, "channel": c.id, "scheduled_message_id": sid, "post_at": str(when),
                "message": {"text": text, "user": self.me, "type": "delayed_message", "team": "T0ENV0WRK",
                            **({"thread_ts": thread_ts} if thread_ts else {})}}

    def scheduled_json(self, s: ScheduledMessage) -> dict[str, Any]:
        return {"id": s.id, "channel_id": s.channel, "post_at": s.post_at, "date_created": s.date_created,
                "text": s.text}

    @api("chat.scheduledMessages.list", "POST api/chat.scheduledMessages.list",
         "Your scheduled messages that have not posted yet (optionally one channel's).",
         params={"channel": "channel id (optional)", "limit": "", "cursor": ""})
    def chat_scheduledMessages_list(self, channel: str | None = None, latest: str | None = None,
                                    oldest: str | None = None, limit: int | None = None, cursor: str | None = None,
                                    team_id: str | None = None) -> dict[str, Any]:
        cid = None
        if channel:
            try:
                cid = self._chan(channel).id
            except Exception:
                raise slack_error("invalid_channel") from None
        try:
            lo = int(float(oldest)) if oldest else None
            hi = int(float(latest)) if latest else None
        except ValueError:
            raise slack_error("invalid_arguments") from None
        rows = [s for s in sorted(self.db.scheduled.values(), key=lambda s: (s.post_at, s.id))
                if (cid is None or s.channel == cid) and (lo is None or s.post_at >= lo)
                and (hi is None or s.post_at <= hi)]
        chunk, nxt = page([self.scheduled_json(s) for s in rows], cursor,
                          min(limit, 1000) if limit and limit > 0 else 100, slack=True)
        return {"ok": True, "scheduled_messages": chunk, "response_metadata": {"next_cursor": nxt or ""}}

    @api("chat.deleteScheduledMessage", "POST api/chat.deleteScheduledMessage",
         "Cancel a scheduled message before it posts.", writes=True,
         params={"channel": "", "scheduled_message_id": "id from chat.scheduleMessage"})
    def chat_deleteScheduledMessage(self, channel: str, scheduled_message_id: str,
                                    as_user: bool | None = None) -> dict[str, Any]:
        c = self._chan(channel)
        s = self.db.scheduled.get(scheduled_message_id)
        if s is None or s.channel != c.id:
            raise slack_error("invalid_scheduled_message_id")
        del self.db.scheduled[s.id]
        return {"ok": True}

    # -- seeding helper ---------------------------------------------------------------------------------
    def add_scheduled(self, channel: str, *, text: str, post_at: datetime) -> ScheduledMessage:
        """Plant a pending scheduled message of the agent user's (channel: id or name)."""
        c = self.db.channels.get(channel) or self.channel_by_name(channel)
        sid = "Q" + self.new_id("scheduled", DIGITS, 10)
        row = ScheduledMessage(id=sid, channel=c.id, post_at=int(post_at.timestamp()),
                               date_created=int(self.ws.now.timestamp()), text=text)
        self.db.scheduled[sid] = row
        return row
