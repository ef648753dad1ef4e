"""Slack state: users (the people directory), conversations (channels and DMs), messages, files, scheduled
messages and reminders. Pins and reactions live on their message; a user's status and presence on their row."""

from __future__ import annotations

from typing import Any

from ...base import DB, Row, table

TEAM = "T0ENV0WRK"  # the one Slack workspace (team) every seeded company has


def tskey(ts: str) -> tuple[int, int]:
    """Exact ordering of Slack timestamps ("1741708800.000123"), no float rounding."""
    whole, _, frac = str(ts).partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()):
        raise ValueError(ts)
    return int(whole), int((frac or "0")[:6].ljust(6, "0"))


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
    # users.profile.set / users.setPresence; None = never set (Slack's defaults: empty, "auto")
    display_name: str | None = None
    status_text: str | None = None
    status_emoji: str | None = None
    status_expiration: int | None = None
    phone: str | None = None
    presence: str | None = None  # "away" when set manually away; None/"auto" = active


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
    files: tuple[str, ...] | None = None  # ids of the files this message shared
    blocks: tuple[dict[str, Any], ...] | None = None  # Block Kit, checked as Slack checks it (blocks.py)


class SlackFile(Row):
    """A file shared in channels (files.upload, files.completeUploadExternal) or a pending v2 upload."""
    id: str
    name: str
    title: str
    filetype: str = "text"
    mimetype: str = "text/plain"
    user: str
    created: int
    content: str = ""
    size: int = 0
    channels: tuple[str, ...] = ()  # conversation ids it is shared in
    shares: tuple[tuple[str, str], ...] = ()  # (channel, ts of the message that shared it)
    pending: bool | None = None  # True between files.getUploadURLExternal and files.completeUploadExternal
    uploaded: bool | None = None  # the v2 upload's bytes arrived


class ScheduledMessage(Row):
    id: str
    channel: str
    post_at: int
    date_created: int
    text: str
    thread_ts: str | None = None
    blocks: tuple[dict[str, Any], ...] | None = None


class Reminder(Row):
    id: str
    creator: str
    user: str
    text: str
    time: int
    complete_ts: int = 0
    recurring: bool = False


class SlackDB(DB):
    users: dict[str, SlackUser] = table()
    channels: dict[str, Channel] = table()
    messages: dict[str, Message] = table()  # key "channel/ts"
    files: dict[str, SlackFile] = table()
    scheduled: dict[str, ScheduledMessage] = table()
    reminders: dict[str, Reminder] = table()
