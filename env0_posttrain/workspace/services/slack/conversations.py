"""Slack conversations.*: listing, reading, creating and managing channels and DMs.

Rules follow Slack's method pages: only the channel's creator or an admin renames it; topic and purpose are capped
at 250 characters; #general cannot be left; the last member of a private channel cannot leave it.
"""

from __future__ import annotations

import re
from typing import Any

from ...base import SLACK_ALPHABET, api
from ...errors import slack_error
from ...paging import page
from .data_model import Channel, tskey
from .state import SlackState, _limit

_MAX_TOPIC = 250
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")


class Conversations(SlackState):
    @api("conversations.list", "POST api/conversations.list", "List channels you can see.",
         params={"types": "public_channel,private_channel,im", "limit": "", "cursor": ""})
    def conversations_list(self, types: str = "public_channel", limit: int | None = None, cursor: str | None = None,
                           exclude_archived: bool = False, team_id: str | None = None) -> dict[str, Any]:
        want = {t.strip() for t in types.split(",") if t.strip()}
        if want - {"public_channel", "private_channel", "im", "mpim"}:
            raise slack_error("invalid_types")
        chans = []
        for c in sorted(self.db.channels.values(), key=lambda c: (c.created, c.id)):
            kind = "im" if c.is_im else ("private_channel" if c.is_private else "public_channel")
            if kind not in want or (exclude_archived and c.is_archived):
                continue
            if kind != "public_channel" and self.me not in c.members:
                continue
            chans.append(self.channel_json(c))
        chunk, nxt = page(chans, cursor, _limit(limit, 100), slack=True)
        return {"ok": True, "channels": chunk, "response_metadata": {"next_cursor": nxt or ""}}

    @api("conversations.history", "POST api/conversations.history", "Messages of a channel, newest first.",
         params={"channel": "channel id", "limit": "", "cursor": "", "oldest": "ts", "latest": "ts"})
    def conversations_history(self, channel: str, limit: int | None = None, cursor: str | None = None,
                              oldest: str | None = None, latest: str | None = None,
                              inclusive: bool = False) -> dict[str, Any]:
        c = self._chan(channel)
        try:
            lo = tskey(oldest) if oldest else None
            hi = tskey(latest) if latest else None
        except ValueError:
            raise slack_error("invalid_ts_oldest" if oldest else "invalid_ts_latest") from None
        msgs = self._index()[0].get(c.id, [])
        if lo is not None or hi is not None:
            msgs = [m for m in msgs if (lo is None or tskey(m.ts) > lo or (inclusive and tskey(m.ts) == lo))
                    and (hi is None or tskey(m.ts) < hi or (inclusive and tskey(m.ts) == hi))]
        chunk, nxt = page(msgs, cursor, _limit(limit, 100, 999), slack=True)
        threads = self._index()[1]
        return {"ok": True, "messages": [self.message_json(m, threads) for m in chunk], "has_more": nxt is not None,
                "pin_count": 0, "channel_actions_ts": None, "channel_actions_count": 0,
                "response_metadata": {"next_cursor": nxt or ""}}

    @api("conversations.replies", "POST api/conversations.replies", "Messages of a thread, oldest first.",
         params={"channel": "", "ts": "parent message ts"})
    def conversations_replies(self, channel: str, ts: str, limit: int | None = None,
                              cursor: str | None = None) -> dict[str, Any]:
        c = self._chan(channel)
        parent = self.db.messages.get(f"{c.id}/{ts}")
        replies = [m for m in self._thread(c.id, ts) if m.ts != ts]
        if parent is None and not replies:
            raise slack_error("thread_not_found")
        chunk, nxt = page([parent] + replies, cursor, _limit(limit, 1000), slack=True)
        # a deleted parent whose replies remain reads as Slack's tombstone
        tombstone = {"type": "message", "subtype": "tombstone", "user": "USLACKBOT", "text": "This message was deleted.",
                     "ts": ts, "thread_ts": ts, "reply_count": len(replies)}
        out = [self.message_json(m) if m is not None else tombstone for m in chunk]
        return {"ok": True, "messages": out, "has_more": nxt is not None,
                "response_metadata": {"next_cursor": nxt or ""}}

    @api("conversations.info", "POST api/conversations.info", "Details of a channel.", params={"channel": ""})
    def conversations_info(self, channel: str, include_num_members: bool = False) -> dict[str, Any]:
        return {"ok": True, "channel": self.channel_json(self._chan(channel))}

    @api("conversations.create", "POST api/conversations.create", "Create a channel.", writes=True,
         params={"name": "lowercase, no spaces", "is_private": ""})
    def conversations_create(self, name: str, is_private: bool = False, team_id: str | None = None) -> dict[str, Any]:
        if not name:
            raise slack_error("invalid_name_required")
        if not _NAME.match(name):
            raise slack_error("invalid_name_specials" if name.lower() == name else "invalid_name")
        if any(c.name == name for c in self.db.channels.values()):
            raise slack_error("name_taken")
        cid = ("G" if is_private else "C") + self.new_id("channel", SLACK_ALPHABET, 10)
        c = Channel(id=cid, name=name, is_private=is_private, created=int(self.ws.now.timestamp()),
                    creator=self.me, members=(self.me,))
        self.db.channels[cid] = c
        return {"ok": True, "channel": self.channel_json(c)}

    @api("conversations.join", "POST api/conversations.join", "Join a public channel.", writes=True,
         params={"channel": ""})
    def conversations_join(self, channel: str) -> dict[str, Any]:
        c = self._chan(channel)
        if c.is_archived:
            raise slack_error("is_archived")
        if c.is_private or c.is_im:
            raise slack_error("method_not_supported_for_channel_type")
        out: dict[str, Any] = {"ok": True}
        if self.me in c.members:
            out["warning"] = "already_in_channel"
            out["response_metadata"] = {"warnings": ["already_in_channel"]}
        else:
            c = c.model_copy(update={"members": c.members + (self.me,)})
            self.db.channels[c.id] = c
        out["channel"] = self.channel_json(c)
        return out

    @api("conversations.invite", "POST api/conversations.invite", "Invite users to a channel.", writes=True,
         params={"channel": "", "users": "comma-separated user ids"})
    def conversations_invite(self, channel: str, users: str) -> dict[str, Any]:
        c = self._chan(channel, member=True)
        ids = [u.strip() for u in users.split(",") if u.strip()]
        if not ids:
            raise slack_error("no_user")
        members = list(c.members)
        for uid in ids:
            if uid == self.me:
                raise slack_error("cant_invite_self")
            if uid not in self.db.users:
                raise slack_error("user_not_found")
            if uid in members:
                raise slack_error("already_in_channel")
            members.append(uid)
        c = c.model_copy(update={"members": tuple(members)})
        self.db.channels[c.id] = c
        return {"ok": True, "channel": self.channel_json(c)}

    @api("conversations.kick", "POST api/conversations.kick", "Remove a user from a channel.", writes=True,
         params={"channel": "", "user": "user id"})
    def conversations_kick(self, channel: str, user: str) -> dict[str, Any]:
        c = self._chan(channel, member=True)
        if c.is_im:
            raise slack_error("method_not_supported_for_channel_type")
        if user == self.me:
            raise slack_error("cant_kick_self")
        if user not in self.db.users:
            raise slack_error("user_not_found")
        if user not in c.members:
            raise slack_error("not_in_channel")
        if c.is_general:
            raise slack_error("cant_kick_from_general")
        self.db.channels[c.id] = c.model_copy(update={"members": tuple(m for m in c.members if m != user)})
        return {"ok": True}

    @api("conversations.archive", "POST api/conversations.archive", "Archive a channel.", writes=True,
         params={"channel": ""})
    def conversations_archive(self, channel: str) -> dict[str, Any]:
        c = self._chan(channel)
        if c.is_archived:
            raise slack_error("already_archived")
        if c.is_general:
            raise slack_error("cant_archive_general")
        if c.is_im:
            raise slack_error("method_not_supported_for_channel_type")
        if c.is_private and self.me not in c.members:
            raise slack_error("not_in_channel")
        self.db.channels[c.id] = c.model_copy(update={"is_archived": True})
        return {"ok": True}

    @api("conversations.members", "POST api/conversations.members", "User ids of a channel's members.",
         params={"channel": "", "limit": "", "cursor": ""})
    def conversations_members(self, channel: str, limit: int | None = None, cursor: str | None = None) -> dict[str, Any]:
        c = self._chan(channel)
        chunk, nxt = page(list(c.members), cursor, _limit(limit, 100), slack=True)
        return {"ok": True, "members": chunk, "response_metadata": {"next_cursor": nxt or ""}}

    @api("conversations.open", "POST api/conversations.open", "Open (or find) a DM with a user; returns its channel.",
         writes=True, params={"users": "one user id"})
    def conversations_open(self, users: str | None = None, channel: str | None = None,
                           return_im: bool | None = None) -> dict[str, Any]:
        if channel:
            return {"ok": True, "channel": self.channel_json(self._chan(channel, member=True)), "already_open": True}
        ids = [u.strip() for u in (users or "").split(",") if u.strip()]
        if not ids:
            raise slack_error("users_list_not_supplied")
        if len(ids) > 1:
            raise slack_error("not_implemented", detail="group DMs (mpim) are not supported")
        if ids[0] not in self.db.users:
            raise slack_error("user_not_found")
        known = {c.id for c in self.db.channels.values() if c.is_im}
        c = self._im_with(ids[0])
        out: dict[str, Any] = {"ok": True, "channel": {"id": c.id}}
        if c.id in known:
            out["already_open"] = True
        return out

    def _editable(self, channel: str) -> Any:
        c = self._chan(channel, member=True)
        if c.is_im:
            raise slack_error("method_not_supported_for_channel_type")
        if c.is_archived:
            raise slack_error("is_archived")
        return c

    @api("conversations.unarchive", "POST api/conversations.unarchive", "Unarchive a channel.", writes=True,
         params={"channel": ""})
    def conversations_unarchive(self, channel: str) -> dict[str, Any]:
        c = self._chan(channel)
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
        return {"ok": True, "channel": self.channel_json(c)}

    def _set_text(self, channel: str, field: str, value: str) -> dict[str, Any]:
        c = self._editable(channel)
        if len(value) > _MAX_TOPIC:
            raise slack_error("too_long")
        c = c.model_copy(update={field: value})
        self.db.channels[c.id] = c
        return {"ok": True, "channel": self.channel_json(c)}

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
        c = self._chan(channel)
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
