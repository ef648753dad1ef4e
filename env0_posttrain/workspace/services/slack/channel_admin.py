"""Slack methods env0 task packages call beyond the core set: channel membership and archiving, DMs by user,
pins, reactions of a message and message search (conversations.members / open / kick / archive, pins.list / add,
reactions.get, search.messages).

A mixin of `Slack`: the handlers use its helpers (`_chan`, `_im_with`, `_index`, `history`, `message_json`).
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import slack_error
from .data_model import tskey
from ...paging import page


def _limit(limit: int | None, default: int, maximum: int = 1000) -> int:
    if limit is None or limit <= 0:
        return default
    return min(limit, maximum)


class ChannelAdmin:
    db: Any
    me: str
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

    @api("pins.list", "POST api/pins.list", "Items pinned in a channel.", params={"channel": ""})
    def pins_list(self, channel: str) -> dict[str, Any]:
        c = self._chan(channel)
        threads = self._index()[1]
        items = [{"type": "message", "channel": c.id, "created": int(float(m.ts)), "created_by": m.user,
                  "message": {**self.message_json(m, threads), "pinned_to": list(m.pinned_to or ())}}
                 for m in self.history(c.id) if c.id in (m.pinned_to or ())]
        return {"ok": True, "items": items}

    @api("pins.add", "POST api/pins.add", "Pin a message to its channel.", writes=True,
         params={"channel": "", "timestamp": "message ts"})
    def pins_add(self, channel: str, timestamp: str) -> dict[str, Any]:
        c = self._chan(channel, member=True)
        m = self.db.messages.get(f"{c.id}/{timestamp}")
        if m is None:
            raise slack_error("message_not_found")
        if c.id in (m.pinned_to or ()):
            raise slack_error("already_pinned")
        self.db.messages[f"{c.id}/{m.ts}"] = m.model_copy(update={"pinned_to": (m.pinned_to or ()) + (c.id,)})
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

    @api("search.messages", "POST api/search.messages",
         "Search messages in channels you can see; supports in:#channel and from:@handle.",
         params={"query": "words, in:#channel, from:@handle", "count": "", "page": ""})
    def search_messages(self, query: str, count: int | None = None, page: int | None = None,
                        sort: str = "score", sort_dir: str = "desc", highlight: bool | None = None) -> dict[str, Any]:
        words, chan, sender = [], None, None
        for tok in query.split():
            if tok.startswith("in:"):
                chan = tok[3:].lstrip("#<").rstrip(">")
            elif tok.startswith("from:"):
                sender = tok[5:].lstrip("@<").rstrip(">")
            else:
                words.append(tok.lower())
        hits = []
        for m in self.db.messages.values():
            c = self.db.channels.get(m.channel)
            if c is None or ((c.is_private or c.is_im) and self.me not in c.members):
                continue
            if chan and chan not in (c.id, c.name):
                continue
            u = self.db.users.get(m.user)
            if sender and u is not None and sender not in (u.id, u.name):
                continue
            if all(w in m.text.lower() for w in words):
                hits.append((m, c, u))
        hits.sort(key=lambda h: tskey(h[0].ts), reverse=(sort_dir != "asc"))
        size, number = _limit(count, 20, 100), max(1, page or 1)
        chunk = hits[(number - 1) * size: number * size]
        pages = max(1, -(-len(hits) // size))
        matches = [{"type": "message", "channel": {"id": c.id, "name": c.name, "is_private": c.is_private},
                    "user": m.user, "username": u.name if u else m.user, "ts": m.ts, "text": m.text,
                    "permalink": f"https://env0.slack.com/archives/{c.id}/p{m.ts.replace('.', '')}"}
                   for m, c, u in chunk]
        paging = {"count": size, "total": len(hits), "page": number, "pages": pages}
        return {"ok": True, "query": query, "messages": {"total": len(hits), "matches": matches, "paging": paging,
                                                          "pagination": {"total_count": len(hits), "page": number,
                                                                         "per_page": size, "page_count": pages,
                                                                         "first": (number - 1) * size + 1,
                                                                         "last": (number - 1) * size + len(chunk)}}}

    @api("reactions.get", "POST api/reactions.get", "A message with its reactions.",
         params={"channel": "", "timestamp": "message ts", "full": "all reacting users"})
    def reactions_get(self, channel: str, timestamp: str, full: bool | None = None) -> dict[str, Any]:
        c = self._chan(channel)
        m = self.db.messages.get(f"{c.id}/{timestamp}")
        if m is None:
            raise slack_error("message_not_found")
        return {"ok": True, "type": "message", "channel": c.id, "message": self.message_json(m)}
