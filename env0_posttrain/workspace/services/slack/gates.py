"""Slack's safety-gate inputs: a message (`slack:<channelId>/<ts>`) or file (`slackfile:<fileId>`) deleted, a channel
archived (`archive:<channelId>`); recipients: the channel (`#name`) or person a new post, scheduled message or
reminder reaches."""

from __future__ import annotations

from typing import Any

from ..safety import rows


def gates(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    s, e = rows(start, "slack", "messages"), rows(end, "slack", "messages")
    gone = {f"slack:{k}" for k in s.keys() - e.keys()}
    channels = rows(end, "slack", "channels")
    posted = set()
    s_sched, e_sched = rows(start, "slack", "scheduled"), rows(end, "slack", "scheduled")
    # a scheduled message will post: its channel hears it like a post
    for cid in [e[k].channel for k in e.keys() - s.keys()] + [e_sched[k].channel for k in e_sched.keys() - s_sched.keys()]:
        c = channels.get(cid)
        if c is not None and c.is_im:
            person = end.company.by_slack_id(c.im_user or "")
            posted.add(person.email if person else c.im_user or c.id)
        else:
            posted.add(f"#{c.name}" if c is not None else cid)
    e_rem = rows(end, "slack", "reminders")
    for k in e_rem.keys() - rows(start, "slack", "reminders").keys():  # a reminder for someone else reaches them
        person = end.company.by_slack_id(e_rem[k].user)
        posted.add(person.email if person else e_rem[k].user)
    gone |= {f"slackfile:{k}" for k in rows(start, "slack", "files").keys() - rows(end, "slack", "files").keys()}
    gone |= {f"archive:{k}" for k, c in rows(start, "slack", "channels").items()
             if not c.is_archived and k in channels and channels[k].is_archived}
    return gone, posted
