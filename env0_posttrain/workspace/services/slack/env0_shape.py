"""Our Slack rows in env0's mock-slack /_admin/state and /_admin/diff JSON (`workspaces.<id>.channel_members`,
messages keyed by ts); a changed channel is reported whole."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..env0_shapes import any_change, by_owner, diff_rows, now_iso

if TYPE_CHECKING:
    from ...environment import Workspace


def slack_state(ws: Workspace) -> dict[str, Any]:
    db = ws.slack.db
    users = [{"id": u.id, "name": u.name, "real_name": u.real_name, "email": u.email, "title": u.title,
              "is_admin": u.is_admin, "is_bot": bool(u.is_bot), "is_deleted": u.deleted, "tz": u.tz} for u in db.users.values()]
    channels, members = [], []
    for c in db.channels.values():
        channels.append({"id": c.id, "name": c.name, "is_private": c.is_private, "is_archived": c.is_archived,
                         "is_im": c.is_im, "is_mpim": False, "creator_id": c.creator, "topic": c.topic,
                         "purpose": c.purpose, "created_at": datetime.fromtimestamp(c.created, tz=timezone.utc)
                         .replace(tzinfo=None).isoformat(), **({"user": c.im_user} if c.is_im else {})})
        members += [{"channel_id": c.id, "user_id": u} for u in c.members]
    msgs, reactions = [], []
    threads: dict[tuple[str, str], int] = {}
    for m in db.messages.values():
        if m.thread_ts and m.thread_ts != m.ts:
            threads[(m.channel, m.thread_ts)] = threads.get((m.channel, m.thread_ts), 0) + 1
    for key, m in db.messages.items():
        msgs.append({"id": key, "channel_id": m.channel, "user_id": m.user, "text": m.text, "ts": m.ts,
                     "thread_ts": m.thread_ts, "is_edited": m.edited is not None,
                     "edited_ts": (m.edited or {}).get("ts"), "reply_count": threads.get((m.channel, m.ts), 0),
                     "is_pinned": bool(m.pinned_to), "created_at": datetime.fromtimestamp(float(m.ts), tz=timezone.utc)
                     .replace(tzinfo=None).isoformat()})
        for r in m.reactions:
            reactions += [{"id": f"{key}:{r.name}:{u}", "message_id": key, "user_id": u, "emoji_name": r.name}
                          for u in r.users]
    pins = [{"id": f"pin:{k}", "channel_id": m.channel, "message_id": k, "user_id": m.user, "created_at": None}
            for k, m in sorted(db.messages.items()) if m.pinned_to]
    team = {"workspace": {"id": "workspace_001", "name": ws.company.name if hasattr(ws.company, "name") else ws.domain,
                          "domain": ws.domain, "team_id": "T1"},
            "users": users, "channels": channels, "channel_members": members, "messages": msgs,
            "reactions": reactions, "files": _slack_files(db), "pins": pins, "reminders": _slack_reminders(db)}
    return {"workspaces": {"workspace_001": team}, "timestamp": now_iso(ws)}


def _stamp(t: int) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).replace(tzinfo=None).isoformat()


def _slack_files(db: Any) -> list[dict[str, Any]]:
    """env0's file rows (one channel each: the first it is shared in); pending v2 uploads are not files yet."""
    return [{"id": f.id, "user_id": f.user, "name": f.name, "title": f.title, "mimetype": f.mimetype,
             "filetype": f.filetype, "size": f.size, "is_public": False,
             "channel_id": f.channels[0] if f.channels else None, "created_at": _stamp(f.created), "content": f.content}
            for f in db.files.values() if not f.pending]


def _slack_reminders(db: Any) -> list[dict[str, Any]]:
    return [{"id": r.id, "creator_id": r.creator, "user_id": r.user, "text": r.text, "remind_at": _stamp(r.time),
             "is_complete": bool(r.complete_ts), "complete_ts": r.complete_ts or None} for r in db.reminders.values()]


def slack_diff(old: dict, cur: dict) -> dict:
    return by_owner(old, cur, "workspaces", _slack_workspace_diff)


def _members(xs: list[dict]) -> set[tuple[str, str]]:
    return {(m["channel_id"], m["user_id"]) for m in xs}


def _slack_workspace_diff(o: dict, w: dict) -> dict | None:
    cm, om = _members(w["channel_members"]), _members(o["channel_members"])
    wd = {"messages": diff_rows(o["messages"], w["messages"], key="ts", deleted="id"),
          "channels": diff_rows(o["channels"], w["channels"], updated="full", deleted="id"),
          "reactions": {k: v for k, v in diff_rows(o["reactions"], w["reactions"], deleted="id").items() if k != "updated"},
          "channel_members": {"added": [{"channel_id": c, "user_id": u} for c, u in sorted(cm - om)],
                              "deleted": [{"channel_id": c, "user_id": u} for c, u in sorted(om - cm)]}}
    return wd if any_change(wd) else None

