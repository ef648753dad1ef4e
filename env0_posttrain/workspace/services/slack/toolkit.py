"""The Slack Web API service, assembled from one mixin per method family (conversations, chat, reactions, pins,
search, files, reminders, users, team, auth) over the state mechanics, plus the seeding helpers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import SLACK_ALPHABET
from .auth import Auth
from .chat import Chat
from .conversations import Conversations
from .data_model import Channel, Message, Reaction, SlackUser
from .files import Files
from .pins import Pins
from .reactions import Reactions
from .reminders import Reminders
from .scheduled import Scheduled
from .search import Search
from .team import Team
from .users import Users


class Slack(Conversations, Chat, Scheduled, Reactions, Pins, Search, Files, Reminders, Users, Team, Auth):
    """Seeding helpers (not tools) on top of every method family."""

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

    def put_channel(self, **fields: Any) -> Channel:
        """Plant a channel row as given, its id included: a seeder's fixed ids (a DM is one with is_im)."""
        c = Channel(**fields)
        self.db.channels[c.id] = c
        return c

    def add_user(self, *, id: str | None = None, **fields: Any) -> SlackUser:
        """Plant a user row (fields as SlackUser's); without an id it gets a new U-id."""
        uid = id or "U" + self.new_id("user", SLACK_ALPHABET, 10)
        u = SlackUser(id=uid, **fields)
        self.db.users[uid] = u
        return u

    def add_message(self, channel: str, *, user: str, text: str, when: datetime | None = None,
                    thread_ts: str | None = None, reactions: dict[str, list[str]] | None = None) -> Message:
        """Plant a message; channel is an id or a name, user a Slack user id."""
        c = self.db.channels.get(channel) or next(x for x in self.db.channels.values() if x.name == channel.lstrip("#"))
        m = Message(channel=c.id, ts=self._next_ts(when), user=user, text=text, thread_ts=thread_ts,
                    reactions=tuple(Reaction(name=k, users=tuple(v)) for k, v in (reactions or {}).items()))
        self.db.messages[f"{c.id}/{m.ts}"] = m
        return m
