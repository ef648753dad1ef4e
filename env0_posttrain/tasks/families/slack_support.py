"""Slack helpers for multi-app templates: channels I can post in, planted messages, new posts."""

from __future__ import annotations

from typing import Any

from env0_posttrain.tasks.families.common import hours_ago


def my_channels(ws: Any) -> list[str]:
    """Names of the public channels the agent's user belongs to (its closed channel vocabulary)."""
    me = ws.me.slack_user_id
    return sorted(c.name for c in ws.slack.db.channels.values()
                  if not c.is_im and not c.is_private and not c.is_archived and me in c.members)


def plant_post(ws: Any, channel: str, email: str, text: str, hours: float = 1.0) -> Any:
    person = ws.person(email)
    return ws.slack.add_message(channel, user=person.slack_user_id, text=text, when=hours_ago(ws, hours))


def find_post(ws: Any, channel: str, email: str, text: str) -> Any:
    uid = ws.person(email).slack_user_id
    for m in ws.slack.history(channel):
        if m.user == uid and m.text == text:
            return m
    raise LookupError(f"no post by {email} in #{channel}")


def new_posts(start: Any, end: Any) -> list[Any]:
    """Messages I posted between start and end (channels and DMs)."""
    before = start.slack.db.messages
    me = start.me.slack_user_id
    return [m for k, m in end.slack.db.messages.items() if k not in before and m.user == me]


def posts_in(start: Any, end: Any, channel: str) -> list[Any]:
    c = end.slack.channel_by_name(channel)
    return [m for m in new_posts(start, end) if c is not None and m.channel == c.id]


def dms_to(start: Any, end: Any, email: str) -> list[Any]:
    uid = end.person(email).slack_user_id
    ims = {c.id for c in end.slack.db.channels.values() if c.is_im and c.im_user == uid}
    return [m for m in new_posts(start, end) if m.channel in ims]


def mentions(text: str, needle: str) -> bool:
    return " ".join(needle.lower().split()) in " ".join((text or "").lower().split())
