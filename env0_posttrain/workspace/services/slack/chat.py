"""Slack chat.*: posting, editing and deleting messages, permalinks and ephemeral messages (scheduled messages:
scheduled.py).

An ephemeral message is shown to one user once and never stored (as in Slack: it is not in history), so
chat.postEphemeral changes no state; the action log records the call.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import slack_error
from .blocks import checked_blocks, checked_text
from .data_model import Channel, Message
from .state import SlackState


def permalink(channel: str, ts: str) -> str:
    return f"https://env0.slack.com/archives/{channel}/p{ts.replace('.', '')}"


class Chat(SlackState):
    @api("chat.postMessage", "POST api/chat.postMessage", "Post a message to a channel, or DM a user id.",
         writes=True, params={"channel": "channel id, #name or user id", "text": "", "thread_ts": "reply in thread"})
    def chat_postMessage(self, channel: str, text: str | None = None, thread_ts: str | None = None,
                         blocks: str | None = None, unfurl_links: bool | None = None, mrkdwn: bool | None = None,
                         as_user: bool | None = None) -> dict[str, Any]:
        c = self._im_with(channel) if channel.startswith("U") else self._chan(channel)
        if c.is_archived:
            raise slack_error("is_archived")
        if not c.is_im and self.me not in c.members:
            raise slack_error("not_in_channel")
        stored = checked_blocks(blocks)
        text = checked_text(text, stored)
        if thread_ts and f"{c.id}/{thread_ts}" not in self.db.messages:
            raise slack_error("thread_not_found")
        m = Message(channel=c.id, ts=self._next_ts(), user=self.me, text=text, thread_ts=thread_ts,
                    blocks=stored or None)
        self.db.messages[f"{c.id}/{m.ts}"] = m
        return {"ok": True, "channel": c.id, "ts": m.ts, "message": self.message_json(m)}

    def _own_message(self, channel: str, ts: str, verb: str) -> tuple[Channel, Message]:
        c = self._chan(channel)
        m = self.db.messages.get(f"{c.id}/{ts}")
        if m is None:
            raise slack_error("message_not_found")
        if m.user != self.me:
            raise slack_error(f"cant_{verb}_message")
        return c, m

    @api("chat.update", "POST api/chat.update", "Edit your message.", writes=True,
         params={"channel": "", "ts": "", "text": ""})
    def chat_update(self, channel: str, ts: str, text: str | None = None,
                    blocks: str | None = None) -> dict[str, Any]:
        """Blocks left out keep the message's blocks; an empty array removes them (as Slack documents)."""
        c, m = self._own_message(channel, ts, "update")
        given = checked_blocks(blocks)
        kept = m.blocks if given is None else (given or None)
        text = checked_text(text, given)
        m = m.model_copy(update={"text": text, "blocks": kept, "edited": {"user": self.me, "ts": self._next_ts()}})
        self.db.messages[f"{c.id}/{ts}"] = m
        out = {"ok": True, "channel": c.id, "ts": ts, "text": text, "message": self.message_json(m)}
        return {**out, "blocks": out["message"]["blocks"]} if kept else out

    @api("chat.delete", "POST api/chat.delete", "Delete your message.", writes=True, params={"channel": "", "ts": ""})
    def chat_delete(self, channel: str, ts: str) -> dict[str, Any]:
        c, m = self._own_message(channel, ts, "delete")
        del self.db.messages[f"{c.id}/{ts}"]
        return {"ok": True, "channel": c.id, "ts": ts}

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
        c = self._chan(channel)
        if c.is_archived:
            raise slack_error("is_archived")
        if self.me not in c.members:
            raise slack_error("not_in_channel")
        if user not in c.members:
            raise slack_error("user_not_in_channel")
        checked_text(text, checked_blocks(blocks))
        n = len(self.ws.action_log) + 1  # nothing stored, so no id counter moves
        return {"ok": True, "message_ts": f"{int(self.ws.now.timestamp())}.{n % 1000000:06d}"}
