"""Slack reactions.*: emoji reactions on messages.

Reactions are a field of the message row (`reactions`), so snapshots, diffs and the verifiers see them with the
message.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ...base import api
from ...errors import slack_error
from ...paging import page
from .data_model import Reaction, tskey
from .state import SlackState

_EMOJI = re.compile(r"^[a-z0-9_+'-]{1,100}$")
_SKIN_TONE = re.compile(r"::skin-tone-[2-6]$")


@functools.cache
def standard_emoji() -> frozenset[str]:
    """The names Slack knows without a custom emoji: Unicode's CLDR names and the aliases Slack shares with GitHub
    (thumbsup, +1, tada), as the `emoji` package keeps them."""
    import emoji

    names = set()
    for data in emoji.EMOJI_DATA.values():
        names.add(data["en"].strip(":").lower())
        names.update(a.strip(":").lower() for a in data.get("alias", ()))
    return frozenset(names)


def known_emoji(name: str) -> bool:
    """A standard emoji name, optionally with a skin tone (`thumbsup::skin-tone-3`); the workspace has no custom
    emoji, so any other name is Slack's `invalid_name`."""
    return bool(_EMOJI.match(_SKIN_TONE.sub("", name))) and _SKIN_TONE.sub("", name) in standard_emoji()


class Reactions(SlackState):
    @api("reactions.add", "POST api/reactions.add", "Add an emoji reaction to a message.", writes=True,
         params={"channel": "", "timestamp": "message ts", "name": "emoji name, e.g. thumbsup"})
    def reactions_add(self, channel: str, timestamp: str, name: str) -> dict[str, Any]:
        c = self._chan(channel)
        name = name.strip(":")
        if not known_emoji(name):
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

    @api("reactions.get", "POST api/reactions.get", "A message with its reactions.",
         params={"channel": "", "timestamp": "message ts", "full": "all reacting users"})
    def reactions_get(self, channel: str, timestamp: str, full: bool | None = None) -> dict[str, Any]:
        c = self._chan(channel)
        m = self.db.messages.get(f"{c.id}/{timestamp}")
        if m is None:
            raise slack_error("message_not_found")
        return {"ok": True, "type": "message", "channel": c.id, "message": self.message_json(m)}

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
        threads = self._index()[1]
        items = []
        for m in sorted(self.db.messages.values(), key=lambda m: tskey(m.ts), reverse=True):
            if not any(uid in r.users for r in m.reactions):
                continue
            c = self.db.channels.get(m.channel)
            if c is None or ((c.is_private or c.is_im) and self.me not in c.members):
                continue
            items.append({"type": "message", "channel": c.id, "message": self.message_json(m, threads)})
        size = limit if limit and limit > 0 else (count if count and count > 0 else 100)
        chunk, nxt = page(items, cursor, min(size, 1000), slack=True)
        return {"ok": True, "items": chunk, "response_metadata": {"next_cursor": nxt or ""}}
