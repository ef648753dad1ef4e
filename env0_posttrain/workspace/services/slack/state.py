"""Slack's state mechanics every method family uses: the agent user, finding a conversation or a message, the
JSON of channels, messages and users, message timestamps.

Methods are called as the agent user (a user token): private channels and DMs are visible only to members."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from ...base import SLACK_ALPHABET, Service
from ...errors import slack_error
from .data_model import TEAM, Channel, Message, SlackDB, SlackFile, SlackUser, tskey

PRETTY = {"markdown": "Markdown (raw)", "text": "Plain Text", "json": "JSON", "csv": "CSV", "python": "Python",
          "html": "HTML", "yaml": "YAML", "javascript": "JavaScript", "shell": "Shell"}
PREVIEW_LINES = 5


def _limit(limit: int | None, default: int, maximum: int = 1000) -> int:
    if limit is None or limit <= 0:
        return default
    return min(limit, maximum)


class SlackState(Service):
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
        if m.blocks:
            out["blocks"] = copy.deepcopy(list(m.blocks))
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

    def _message(self, channel: str, timestamp: str, *, member: bool = False) -> tuple[Any, Any]:
        c = self._chan(channel, member=member)
        m = self.db.messages.get(f"{c.id}/{timestamp}")
        if m is None:
            raise slack_error("message_not_found")
        return c, m

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

    def history(self, channel: str) -> list[Message]:
        c = self.db.channels.get(channel) or self.channel_by_name(channel)
        if c is None:
            return []
        return sorted((m for m in self.db.messages.values() if m.channel == c.id), key=lambda m: tskey(m.ts))

    def channel_by_name(self, name: str) -> Channel | None:
        return next((c for c in self.db.channels.values() if c.name == name.lstrip("#")), None)

    def profile_json(self, u: Any) -> dict[str, Any]:
        first, _, last = u.real_name.partition(" ")
        display = u.display_name if u.display_name is not None else u.name
        return {"title": u.title, "phone": u.phone or "", "skype": "", "real_name": u.real_name,
                "real_name_normalized": u.real_name, "display_name": display, "display_name_normalized": display,
                "fields": {}, "status_text": u.status_text or "", "status_emoji": u.status_emoji or "",
                "status_emoji_display_info": [], "status_expiration": u.status_expiration or 0,
                "avatar_hash": "", "first_name": first, "last_name": last, "email": u.email, "team": "T0ENV0WRK"}

    def file_json(self, f: SlackFile) -> dict[str, Any]:
        lines = f.content.split("\n") if f.content else []
        buckets: dict[str, list[str]] = {"channels": [], "groups": [], "ims": []}
        shares: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for cid in f.channels:
            c = self.db.channels.get(cid)
            if c is None:
                continue
            kind = "ims" if c.is_im else ("groups" if c.is_private else "channels")
            buckets[kind].append(cid)
            scope = "public" if kind == "channels" else "private"
            for ch, ts in f.shares:
                if ch == cid:
                    entry = {"ts": ts, "channel_name": c.name, "team_id": TEAM, "share_user_id": f.user,
                             "reply_count": 0}
                    shares.setdefault(scope, {}).setdefault(cid, []).append(entry)
        base = f"https://files.slack.com/files-pri/{TEAM}-{f.id}"
        out: dict[str, Any] = {
            "id": f.id, "created": f.created, "timestamp": f.created, "name": f.name, "title": f.title,
            "mimetype": f.mimetype, "filetype": f.filetype, "pretty_type": PRETTY.get(f.filetype, f.filetype.upper()),
            "user": f.user, "user_team": TEAM, "editable": False, "size": f.size, "mode": "hosted",
            "is_external": False, "external_type": "", "is_public": bool(buckets["channels"]),
            "public_url_shared": False, "display_as_bot": False, "username": "",
            "url_private": f"{base}/{f.name}", "url_private_download": f"{base}/download/{f.name}",
            "permalink": f"https://env0.slack.com/files/{f.user}/{f.id}/{f.name}",
            "permalink_public": f"https://slack-files.com/{TEAM}-{f.id}-env0", "comments_count": 0,
            "is_starred": False, "shares": shares, **buckets, "has_rich_preview": False}
        if f.mimetype.startswith("text/") or f.mimetype == "application/json":
            out.update({"preview": "\n".join(lines[:PREVIEW_LINES]), "lines": len(lines),
                        "lines_more": max(0, len(lines) - PREVIEW_LINES),
                        "preview_is_truncated": len(lines) > PREVIEW_LINES})
        return out
