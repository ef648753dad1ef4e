"""Slack state: users (the people directory), conversations (channels and DMs) and messages."""

from __future__ import annotations

from typing import Any

from ...base import DB, Row, table


class SlackUser(Row):
    id: str
    name: str
    real_name: str
    email: str
    title: str = ""
    is_admin: bool = False
    deleted: bool = False
    tz: str = "America/Los_Angeles"
    is_bot: bool | None = None  # None (not False) keeps the dumps of existing workspaces unchanged


class Channel(Row):
    id: str
    name: str = ""
    is_private: bool = False
    is_im: bool = False
    im_user: str | None = None
    created: int
    creator: str
    members: tuple[str, ...] = ()
    topic: str = ""
    purpose: str = ""
    is_archived: bool = False
    is_general: bool = False


class Reaction(Row):
    name: str
    users: tuple[str, ...]


class Message(Row):
    channel: str
    ts: str
    user: str
    text: str
    thread_ts: str | None = None
    reactions: tuple[Reaction, ...] = ()
    edited: dict[str, Any] | None = None
    pinned_to: tuple[str, ...] | None = None


class SlackDB(DB):
    users: dict[str, SlackUser] = table()
    channels: dict[str, Channel] = table()
    messages: dict[str, Message] = table()  # key "channel/ts"
