"""Slack Web API methods (conversations, chat, users, reactions) and the seeding helpers; the other methods are
mixins from the sibling modules (channel admin and edits, message extras, files, scheduled messages, reminders,
profile and presence).

Methods are called as the agent user (a user token): private channels and DMs are visible only to members.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ...base import SLACK_ALPHABET, Service, api
from ...errors import slack_error
from ...paging import page
from .channel_admin import ChannelAdmin
from .channel_edits import ChannelEdits
from .files import Files
from .message_extras import MessageExtras
from .profile import Profile
from .reminders import Reminders
from .scheduled import Scheduled
from .data_model import TEAM, Channel, Message, Reaction, SlackDB, SlackUser, tskey

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
_EMOJI = re.compile(r"^[a-z0-9_+'-]{1,100}$")


def _limit(limit: int | None, default: int, maximum: int = 1000) -> int:
    if limit is None or limit <= 0:
        return default
    return min(limit, maximum)


class Slack(ChannelAdmin, ChannelEdits, MessageExtras, Files, Scheduled, Reminders, Profile, Service):
    name = "slack"
    DB = SlackDB
    db: SlackDB

    def bootstrap(self) -> None:
        for p in self.ws.directory:
            self.db.users[p.slack_user_id] = SlackUser(
                id=p.slack_user_id, name=p.handle, real_name=p.name, email=p.email, title=p.title,
                is_admin=p.department == "Executive" or p.email == self.ws.me.email)

    @property
    def me(self) -> str:
        return self.ws.me.slack_user_id

    # -- helpers --------------------------------------------------------------------------------
    def _chan(self, channel: str | None, *, member: bool = False) -> Channel:
        if not channel:
            raise slack_error("channel_not_found")
        c = self.db.channels.get(channel)
        if c is None:
            name = channel.lstrip("#")
            c = next((x for x in self.db.channels.values() if x.name == name and not x.is_im), None)
        if c is None or ((c.is_private or c.is_im) and self.me not in c.members):
            raise slack_error("channel_not_found")
        if member and self.me not in c.members:
            raise slack_error("not_in_channel")
        return c

    def _next_ts(self, when: datetime | None = None) -> str:
        self.db.seq += 1
        base = int((when or self.ws.now).timestamp())
        return f"{base}.{self.db.seq % 1000000:06d}"

    def channel_json(self, c: Channel) -> dict[str, Any]:
        if c.is_im:
            return {"id": c.id, "created": c.created, "is_im": True, "is_org_shared": False, "user": c.im_user,
                    "is_user_deleted": False, "priority": 0}
        return {"id": c.id, "name": c.name, "is_channel": not c.is_private, "is_group": c.is_private,
                "is_im": False, "is_mpim": False, "is_private": c.is_private, "created": c.created,
                "is_archived": c.is_archived, "is_general": c.is_general, "unlinked": 0, "name_normalized": c.name,
                "is_shared": False, "is_org_shared": False, "is_member": self.me in c.members,
                "creator": c.creator, "topic": {"value": c.topic, "creator": c.creator if c.topic else "",
                                                "last_set": c.created if c.topic else 0},
                "purpose": {"value": c.purpose, "creator": c.creator if c.purpose else "",
                            "last_set": c.created if c.purpose else 0},
                "previous_names": [], "num_members": len(c.members)}

    def message_json(self, m: Message, threads: dict[tuple[str, str], list[Message]] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "user": m.user, "text": m.text, "ts": m.ts, "team": TEAM}
        if m.thread_ts:
            out["thread_ts"] = m.thread_ts
        if m.thread_ts == m.ts or m.thread_ts is None:
            thread = (threads if threads is not None else self._index()[1]).get((m.channel, m.ts))
            replies = [x for x in thread if x.ts != m.ts] if thread else None
            if replies:
                out["thread_ts"] = m.ts
                out["reply_count"] = len(replies)
                out["latest_reply"] = replies[-1].ts
        if m.edited:
            out["edited"] = dict(m.edited)
        if m.reactions:
            out["reactions"] = [{"name": r.name, "users": list(r.users), "count": len(r.users)} for r in m.reactions]
        if m.pinned_to:
            out["pinned_to"] = list(m.pinned_to)
        if m.files:
            out["files"] = [self.file_json(f) if (f := self.db.files.get(fid)) is not None
                             else {"id": fid, "mode": "tombstone"} for fid in m.files]
            out["upload"] = True
        return out

    def _thread(self, channel: str, ts: str) -> list[Message]:
        return self._index()[1].get((channel, ts), [])

    def _index(self) -> tuple[dict[str, list[Message]], dict[tuple[str, str], list[Message]]]:
        """(channel -> top-level messages newest first, (channel, thread_ts) -> thread oldest first), memoised."""
        def build() -> tuple[dict[str, list[Message]], dict[tuple[str, str], list[Message]]]:
            top: dict[str, list[Message]] = {}
            threads: dict[tuple[str, str], list[Message]] = {}
            for m in sorted(self.db.messages.values(), key=lambda m: tskey(m.ts)):
                if m.thread_ts:
                    threads.setdefault((m.channel, m.thread_ts), []).append(m)
                if not m.thread_ts or m.thread_ts == m.ts:
                    top.setdefault(m.channel, []).append(m)
            for v in top.values():
                v.reverse()
            return top, threads
        return self.db.cached("index", self.db.messages.version, build)

    def user_json(self, u: SlackUser) -> dict[str, Any]:
        first, _, last = u.real_name.partition(" ")
        return {"id": u.id, "team_id": TEAM, "name": u.name, "deleted": u.deleted, "real_name": u.real_name,
                "tz": u.tz, "is_admin": u.is_admin, "is_owner": False, "is_bot": bool(u.is_bot), "is_app_user": False,
                "profile": {"title": u.title, "real_name": u.real_name, "display_name": u.name,
                            "first_name": first, "last_name": last, "email": u.email, "team": TEAM}
                if u.display_name is None and u.status_text is None and u.status_emoji is None and u.phone is None
                else self.profile_json(u)}  # an edited profile shows its status and display name

    # -- conversations --------------------------------------------------------------------------
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

    # -- chat -----------------------------------------------------------------------------------
    def _im_with(self, uid: str) -> Channel:
        u = self.db.users.get(uid)
        if u is None or u.deleted:
            raise slack_error("channel_not_found")
        for c in self.db.channels.values():
            if c.is_im and set(c.members) == {self.me, uid}:
                return c
        c = Channel(id="D" + self.new_id("im", SLACK_ALPHABET, 10), is_im=True, im_user=uid,
                    created=int(self.ws.now.timestamp()), creator=self.me, members=(self.me, uid))
        self.db.channels[c.id] = c
        return c

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
        if not text or not text.strip():
            raise slack_error("no_text")
        if len(text) > 40000:
            raise slack_error("msg_too_long")
        if thread_ts and f"{c.id}/{thread_ts}" not in self.db.messages:
            raise slack_error("thread_not_found")
        m = Message(channel=c.id, ts=self._next_ts(), user=self.me, text=text, thread_ts=thread_ts)
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
    def chat_update(self, channel: str, ts: str, text: str | None = None) -> dict[str, Any]:
        c, m = self._own_message(channel, ts, "update")
        if not text:
            raise slack_error("no_text")
        m = m.model_copy(update={"text": text, "edited": {"user": self.me, "ts": self._next_ts()}})
        self.db.messages[f"{c.id}/{ts}"] = m
        return {"ok": True, "channel": c.id, "ts": ts, "text": text, "message": self.message_json(m)}

    @api("chat.delete", "POST api/chat.delete", "Delete your message.", writes=True, params={"channel": "", "ts": ""})
    def chat_delete(self, channel: str, ts: str) -> dict[str, Any]:
        c, m = self._own_message(channel, ts, "delete")
        del self.db.messages[f"{c.id}/{ts}"]
        return {"ok": True, "channel": c.id, "ts": ts}

    @api("reactions.add", "POST api/reactions.add", "Add an emoji reaction to a message.", writes=True,
         params={"channel": "", "timestamp": "message ts", "name": "emoji name, e.g. thumbsup"})
    def reactions_add(self, channel: str, timestamp: str, name: str) -> dict[str, Any]:
        c = self._chan(channel)
        name = name.strip(":")
        if not _EMOJI.match(name):
            raise slack_error("invalid_name")
        m = self.db.messages.get(f"{c.id}/{timestamp}")
        if m is None:
            raise slack_error("message_not_found")
        rs = list(m.reactions)
        for i, r in enumerate(rs):
            if r.name == name:
                if self.me in r.users:
                    raise slack_error("already_reacted")
                rs[i] = r.model_copy(update={"users": r.users + (self.me,)})
                break
        else:
            rs.append(Reaction(name=name, users=(self.me,)))
        self.db.messages[f"{c.id}/{timestamp}"] = m.model_copy(update={"reactions": tuple(rs)})
        return {"ok": True}

    @api("auth.test", "POST api/auth.test", "Who you are in Slack (your user id).")
    def auth_test(self) -> dict[str, Any]:
        team = self.ws.company.name
        return {"ok": True, "url": f"https://{self.ws.domain.split('.')[0]}.slack.com/", "team": team,
                "user": self.ws.me.handle, "team_id": TEAM, "user_id": self.me, "is_enterprise_install": False}

    # -- users ----------------------------------------------------------------------------------
    @api("users.list", "POST api/users.list", "List workspace members.", params={"limit": "", "cursor": ""})
    def users_list(self, limit: int | None = None, cursor: str | None = None) -> dict[str, Any]:
        users = [self.user_json(u) for u in sorted(self.db.users.values(), key=lambda u: u.id)]
        chunk, nxt = page(users, cursor, _limit(limit, 1000), slack=True)
        return {"ok": True, "members": chunk, "cache_ts": int(self.ws.now.timestamp()),
                "response_metadata": {"next_cursor": nxt or ""}}

    @api("users.info", "POST api/users.info", "A member's profile.", params={"user": "user id"})
    def users_info(self, user: str) -> dict[str, Any]:
        u = self.db.users.get(user)
        if u is None:
            raise slack_error("user_not_found")
        return {"ok": True, "user": self.user_json(u)}

    @api("users.lookupByEmail", "POST api/users.lookupByEmail", "Find a member by email.", params={"email": ""})
    def users_lookupByEmail(self, email: str) -> dict[str, Any]:
        e = email.strip().lower()
        for u in self.db.users.values():
            if u.email == e and not u.deleted:
                return {"ok": True, "user": self.user_json(u)}
        raise slack_error("users_not_found")

    # -- seeding helpers ------------------------------------------------------------------------
    def add_channel(self, name: str, *, members: list[str] | None = None, private: bool = False,
                    topic: str = "", purpose: str = "", creator: str | None = None,
                    created: datetime | None = None, is_general: bool = False) -> Channel:
        """Plant a channel; members are Slack user ids (default: everyone for public channels)."""
        mem = tuple(members) if members is not None else tuple(self.db.users)
        cid = ("G" if private else "C") + self.new_id("channel", SLACK_ALPHABET, 10)
        c = Channel(id=cid, name=name, is_private=private, created=int((created or self.ws.now).timestamp()),
                    creator=creator or (mem[0] if mem else self.me), members=mem, topic=topic, purpose=purpose,
                    is_general=is_general)
        self.db.channels[cid] = c
        return c

    def add_message(self, channel: str, *, user: str, text: str, when: datetime | None = None,
                    thread_ts: str | None = None, reactions: dict[str, list[str]] | None = None) -> Message:
        """Plant a message; channel is an id or a name, user a Slack user id."""
        c = self.db.channels.get(channel) or next(x for x in self.db.channels.values() if x.name == channel.lstrip("#"))
        m = Message(channel=c.id, ts=self._next_ts(when), user=user, text=text, thread_ts=thread_ts,
                    reactions=tuple(Reaction(name=k, users=tuple(v)) for k, v in (reactions or {}).items()))
        self.db.messages[f"{c.id}/{m.ts}"] = m
        return m

    def channel_by_name(self, name: str) -> Channel | None:
        return next((c for c in self.db.channels.values() if c.name == name.lstrip("#")), None)

    def history(self, channel: str) -> list[Message]:
        c = self.db.channels.get(channel) or self.channel_by_name(channel)
        if c is None:
            return []
        return sorted((m for m in self.db.messages.values() if m.channel == c.id), key=lambda m: tskey(m.ts))
