"""Slack search.messages: the messages the agent user can see."""

from __future__ import annotations

from typing import Any

from ...base import api
from .data_model import tskey
from .state import SlackState, _limit


class Search(SlackState):
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
