"""Plant an env0 package's Slack needles (SEED_USERS / SEED_CHANNELS / SEED_MESSAGES / SEED_INVITE_TRIGGERS) over
env0's base scenario when there is a checkout (env0's mock-slack always seeds it under the needles)."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..env0_planting import Planting, fill_config

if TYPE_CHECKING:
    from ...environment import Workspace

FILL = "SLACK_FILL_CONFIG"  # its needles module's own fill config; else FILL_CONFIG, read as Slack's alone

def plant(ws: Workspace, mod: ModuleType, p: Planting) -> None:
    if p.env0_root is not None:
        p.fills.slack_default(ws, p.env0_root, fill_config(mod, FILL, 1), p.seed)
    _slack(ws, mod, p.extras)


def _slack(ws: Workspace, mod: ModuleType, extras: dict[str, Any]) -> None:
    """SEED_INVITE_TRIGGERS (a person who, once DMed, invites the agent to a private channel: env0's mock does it,
    Slack has no such thing) go to `extras` for the server."""
    triggers: list[tuple[str, str]] = extras.setdefault("triggers", [])
    ids: dict[str, str] = {}
    by_email = {u.email: u.id for u in ws.slack.db.users.values()}
    for u in getattr(mod, "SEED_USERS", None) or []:
        uid = by_email.get(u.get("email", "")) if u.get("email") else None
        if uid is None:
            uid = ws.slack.add_user(id=u.get("id"), name=u["name"], real_name=u.get("real_name", u["name"]),
                                    email=u.get("email", ""), title=u.get("title", ""),
                                    is_admin=bool(u.get("is_admin", False)), is_bot=u.get("is_bot") or None).id
        ids[u["key"]] = uid
    for u in ws.slack.db.users.values():  # members named by handle when no SEED_USERS key matches
        ids.setdefault(u.name, u.id)
        ids.setdefault(u.name.split(".")[0], u.id)

    def uid(key: str) -> str:
        if key not in ids:
            ids[key] = ws.slack.add_user(name=key, real_name=key.replace("_", " ").title(), email=f"{key}@{ws.domain}").id
        return ids[key]

    for c in getattr(mod, "SEED_CHANNELS", None) or []:
        members = [uid(k) for k in c.get("members", [])]
        if ws.slack.me not in members and not c.get("is_private", False):
            members.append(ws.slack.me)  # env0's agent reads and posts in public channels; private ones need an invite
        if ws.slack.channel_by_name(c["name"]) is None:
            made = ws.slack.add_channel(c["name"], members=members, private=c.get("is_private", False),
                                        topic=c.get("topic", ""), purpose=c.get("purpose", ""),
                                        creator=uid(c["creator"]) if c.get("creator") else None)
            if c.get("id") and c["id"] != made.id:  # verifiers look channels up by the package's fixed id
                del ws.slack.db.channels[made.id]
                ws.slack.db.channels[c["id"]] = made.model_copy(update={"id": c["id"]})
        for pin in c.get("pins") or []:
            when = ws.now - timedelta(days=float(pin.get("days_ago", 1)))
            m = ws.slack.add_message(c["name"], user=uid(pin.get("pinned_by", "alex")), text=pin.get("text", ""), when=when)
            ws.slack.db.messages[f"{m.channel}/{m.ts}"] = m.model_copy(update={"pinned_to": (m.channel,)})
    for t in getattr(mod, "SEED_INVITE_TRIGGERS", None) or []:
        chan = ws.slack.channel_by_name(t["grant_channel"])
        if chan is not None and t.get("when_dm_to"):
            triggers.append((uid(t["when_dm_to"]), chan.id))
    seeded = getattr(mod, "SEED_MESSAGES", None) or {}
    for channel, msgs in seeded.items():
        if ws.slack.channel_by_name(channel) is None:
            ws.slack.add_channel(channel, members=[ws.slack.me])
        when_of = functools.partial(_posted_at, ws.now, len(msgs))
        for i, m in sorted(enumerate(msgs), key=lambda im: when_of(*im)):
            reactions: dict[str, list[str]] = {}
            for r in m.get("reactions") or []:
                reactions.setdefault(r.get("emoji", "thumbsup"), []).extend(uid(k) for k in r.get("users", []))
            parent = ws.slack.add_message(channel, user=uid(m["sender"]), text=m["text"], when=min(when_of(i, m), ws.now),
                                          reactions=reactions)
            when = when_of(i, m)
            for j, r in enumerate(m.get("thread") or []):
                ws.slack.add_message(channel, user=uid(r["sender"]), text=r["text"],
                                     when=min(when + timedelta(minutes=5 * (j + 1)), ws.now), thread_ts=parent.ts)


def _posted_at(now: datetime, n: int, i: int, m: dict) -> datetime:
    """env0's message times: days_ago / hours_ago, else one hour apart ending now; i-th message 0.1 s later."""
    if "days_ago" in m:
        return now - timedelta(days=float(m["days_ago"]), seconds=-0.1 * i)
    if "hours_ago" in m:
        return now - timedelta(hours=float(m["hours_ago"]), seconds=-0.1 * i)
    return now - timedelta(hours=n - i)
