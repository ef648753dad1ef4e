"""Our workspace state in env0's /_admin/state and /_admin/diff JSON shapes, one function per service.

The verifiers of env0 packages read these exact keys (e.g. gmail `users.<id>.messages[].isSent`, drive
`files[].parentId`, slack `workspaces.<id>.channel_members`), so each projection follows env0's field names;
diffs are computed between two projections the way env0 computes them (by id; gmail and docs report the
changed fields of an update, calendar, drive-less slack channels the whole row).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

from ....workspace.environment import Workspace
from .shapes_google import comment_replies, gmail_settings
from .shapes_auth import auth_diff, auth_state
from .shapes_stripe import stripe_diff, stripe_state

FOLDER = "application/vnd.google-apps.folder"


def _iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).replace(tzinfo=None).isoformat()


def _iso(rfc: str | None) -> str | None:
    return rfc.replace(".000Z", "").replace("Z", "") if rfc else None


# -- state --------------------------------------------------------------------------------------
def gmail_state(ws: Workspace) -> dict[str, Any]:
    users = {"user1": _mailbox(ws, ws.me.email, "user1", ws.me.name, gmail_settings(ws))}
    for uid in ws.auth.db.extra_mailboxes:  # another account with a mailbox here (auth's personal-account packages)
        u = ws.auth.db.users[uid]
        users[uid] = _mailbox(ws, u.email, uid, u.display_name, {})
    return {"users": users, "timestamp": _now(ws)}


def _mailbox(ws: Workspace, me: str, uid: str, name: str, settings: dict[str, Any]) -> dict[str, Any]:
    msgs = []
    for m in ws.gmail.db.messages.values():
        if m.userId != me:
            continue
        labels = set(m.labelIds)
        msgs.append({"id": m.id, "threadId": m.threadId, "sender": m.sender, "to": ", ".join(m.to),
                     "cc": ", ".join(m.cc), "bcc": ", ".join(m.bcc), "subject": m.subject, "snippet": m.body[:200],
                     "body": m.body, "bodyHtml": "", "internalDate": _iso_ms(m.internalDate),
                     "isRead": "UNREAD" not in labels, "isStarred": "STARRED" in labels, "isTrash": "TRASH" in labels,
                     "isSpam": "SPAM" in labels, "isDraft": "DRAFT" in labels, "isSent": "SENT" in labels,
                     "labelIds": [x for x in m.labelIds if x not in ("UNREAD", "STARRED")],
                     "messageIdHeader": m.messageIdHeader, "inReplyTo": m.inReplyTo or "", "references": m.references or ""})
    threads = {m["threadId"]: m["snippet"] for m in msgs}
    labels = [{"id": x, "name": x, "type": "system"} for x in ("INBOX", "SENT", "DRAFT", "SPAM", "TRASH", "UNREAD",
                                                               "STARRED", "IMPORTANT")]
    labels += [{"id": l.id, "name": l.name, "type": l.type} for l in ws.gmail.db.labels.values() if l.userId == me]
    return {"user": {"id": uid, "email": me, "displayName": name, "historyId": ws.gmail.db.history},
            "messages": msgs, "threads": [{"id": t, "snippet": s, "historyId": 1} for t, s in threads.items()],
            "labels": labels, "drafts": [{"id": d.id, "messageId": d.messageId} for d in ws.gmail.db.drafts.values()
                                         if d.userId == me],
            "contacts": [{"id": p.user_id, "name": p.name, "email": p.email} for p in ws.directory],
            **settings}


def _size(f: Any) -> int:
    """env0's size: the blob's bytes, or the text's characters."""
    return len(f.blob) if f.blob is not None else len(f.content or "")


def drive_state(ws: Workspace) -> dict[str, Any]:
    files, perms = [], []
    roots = {ws.drive.root_id(p.email) for p in ws.directory}
    for f in ws.drive.db.files.values():
        if f.id in roots or f.id in ws.drive.db.drives:  # env0 has no row for My Drive (nor a shared drive's root)
            continue
        owner = ws.person(f.ownerEmail)
        files.append({"id": f.id, "name": f.name, "mimeType": f.mimeType, "parentId": f.parents[0] if f.parents else None,
                      "ownerId": owner.user_id if owner else f.ownerEmail, "lastModifyingUserId": owner.user_id if owner else None,
                      "createdTime": _iso(f.createdTime), "modifiedTime": _iso(f.modifiedTime), "viewedByMeTime": None,
                      "trashed": f.trashed, "starred": f.starred, "explicitlyTrashed": f.trashed,
                      "size": _size(f) if f.mimeType != FOLDER else None, "description": f.description,
                      "properties": None, "version": f.version, "webViewLink": f"https://drive.google.com/file/d/{f.id}/view",
                      "writersCanShare": True, "shortcutTargetId": None, "shortcutTargetMimeType": None,
                      "hasContentText": f.content is not None or f.id in ws.docs.db.documents,
                      "hasContentBlob": f.blob is not None})
        for p in f.permissions:
            perms.append({"id": p.id, "fileId": f.id, "role": p.role, "type": p.type,
                          "emailAddress": p.emailAddress, "displayName": p.displayName, "domain": p.domain,
                          "inherited": False, "inheritedFrom": None, "expirationTime": None, "pendingOwner": False})
    me = ws.me
    return {"users": {me.user_id: {"user": {"id": me.user_id, "email": me.email, "displayName": me.name}}},
            "files": files, "permissions": perms, "timestamp": _now(ws)}


def docs_state(ws: Workspace) -> dict[str, Any]:
    docs = []
    for d in ws.docs.db.documents.values():
        f = ws.drive.db.files.get(d.documentId)
        rendered = ws.docs.render(d)
        docs.append({"id": d.documentId, "title": d.title, "body": rendered.get("body", {}),
                     "revisionId": str(d.revision), "createdTime": _iso(f.createdTime) if f else None,
                     "modifiedTime": _iso(f.modifiedTime) if f else None, "trashed": bool(f and f.trashed)})
    me = ws.me
    comments = [{"id": c.id, "documentId": c.fileId, "authorId": c.authorEmail, "content": c.content,
                 "resolved": c.resolved, "quotedText": c.quotedText, "replies": comment_replies(ws, c.id),
                 "createdTime": _iso(c.createdTime),
                 "modifiedTime": _iso(c.modifiedTime)}
                for c in ws.drive.db.comments.values() if c.fileId in ws.docs.db.documents and not c.deleted]
    return {"users": {"user1": {"user": {"id": "user1", "email": me.email, "displayName": me.name},
                                "documents": docs, "comments": comments, "permissions": [], "revisions": []}},
            "timestamp": _now(ws)}


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
    return {"workspaces": {"workspace_001": team}, "timestamp": _now(ws)}


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


def calendar_state(ws: Workspace) -> dict[str, Any]:
    me = ws.me.email
    events = []
    for e in ws.calendar.db.events.values():
        if not ws.calendar.on_calendar(e, me) or e.status == "cancelled":
            continue  # Calendar keeps a deleted event as status "cancelled"; env0 removes the row
        # env0 keeps a date-time as naive UTC (the stored instant, read in UTC, without an offset)
        start, end = _iso(e.start.get("dateTime")) or e.start.get("date"), _iso(e.end.get("dateTime")) or e.end.get("date")
        events.append({"id": e.id, "calendarId": "primary" if e.calendarId == me else e.calendarId,
                       "summary": e.summary, "description": e.description, "location": e.location, "status": e.status,
                       "start": start, "end": end, "startIsDate": "date" in e.start, "endIsDate": "date" in e.end,
                       "attendees": [a.dump() for a in e.attendees], "iCalUID": f"{e.id}@google.com",
                       "sequence": e.sequence, "recurrence": list(e.recurrence) if e.recurrence else None,
                       "created": e.created, "updated": e.updated})
    cals = [{"id": "primary" if c.id == me else c.id, "summary": c.summary, "description": c.description,
             "timeZone": c.timeZone, "accessRole": "owner" if c.owner == me else (c.meRole or "freeBusyReader"),
             "primary": c.id == me} for c in ws.calendar.db.calendars.values()
            if c.owner == me or c.meRole]
    owned = {c.id for c in ws.calendar.db.calendars.values() if c.owner == me}
    acls = [{"id": f"{r.calendarId}:{r.id}", "calendarId": "primary" if r.calendarId == me else r.calendarId,
             "scopeType": r.scopeType, "scopeValue": r.scopeValue, "role": r.role}
            for _, r in sorted(ws.calendar.db.acl.items()) if r.calendarId in owned]
    user = {"user": {"id": "user1", "email": me, "displayName": ws.me.name, "timezone": "UTC", "historyId": 1},
            "calendars": cals, "acls": acls, "events": events}
    return {"users": {"user1": user}, "timestamp": _now(ws)}


def _now(ws: Workspace) -> str:
    return ws.now.replace(tzinfo=None).isoformat()


STATE: dict[str, Callable[[Workspace], dict[str, Any]]] = {
    "gmail": gmail_state, "drive": drive_state, "docs": docs_state, "slack": slack_state, "calendar": calendar_state,
    "stripe": stripe_state, "auth": auth_state}


# -- diff ---------------------------------------------------------------------------------------
def _by(items: list[dict], key: str) -> dict[str, dict]:
    return {str(i[key]): i for i in items}


def _changes(cur: dict, old: dict) -> dict:
    return {k: v for k, v in cur.items() if old.get(k) != v}


def _diff(old: list[dict], cur: list[dict], key: str = "id", updated: str = "changes", deleted: str = "full") -> dict:
    o, c = _by(old, key), _by(cur, key)
    out: dict[str, list] = {"added": [v for k, v in c.items() if k not in o], "updated": [], "deleted": []}
    for k, v in c.items():
        if k in o and v != o[k]:
            out["updated"].append({key: k, **_changes(v, o[k])} if updated == "changes" else v)
    out["deleted"] = [o[k] if deleted == "full" else {key: k} for k in o if k not in c]
    return out


def _any(d: dict) -> bool:
    return any(bool(v) for part in d.values() for v in (part.values() if isinstance(part, dict) else [part]))


def _by_owner(old: dict, cur: dict, owners: str, diff_one) -> dict:
    """env0's per-owner diff (users or workspaces): a new owner is added whole, a changed one carries its diff."""
    out: dict[str, dict] = {"added": {}, "updated": {}, "deleted": {}}
    for key, c in cur[owners].items():
        o = old[owners].get(key)
        if o is None:
            out["added"][key] = c
        elif (d := diff_one(o, c)) is not None:
            out["updated"][key] = d
    return out


def gmail_diff(old: dict, cur: dict) -> dict:
    return _by_owner(old, cur, "users", _gmail_user_diff)


def _gmail_user_diff(o: dict, u: dict) -> dict | None:
    msgs = _diff(o["messages"], u["messages"])
    before = _by(o["messages"], "id")
    for upd in msgs["updated"]:
        if "labelIds" in upd:
            was, now = set(before[upd["id"]]["labelIds"]), set(upd["labelIds"])
            if now - was:
                upd["labelsAdded"] = sorted(now - was)
            if was - now:
                upd["labelsRemoved"] = sorted(was - now)
    ud: dict[str, Any] = {"messages": msgs}
    ol, cl = _by(o["labels"], "id"), _by(u["labels"], "id")
    labels = {"added": [v for k, v in cl.items() if k not in ol], "removed": [v for k, v in ol.items() if k not in cl]}
    if any(labels.values()):
        ud["labels"] = labels
    return ud if any(msgs.values()) or "labels" in ud else None


def drive_diff(old: dict, cur: dict) -> dict:
    # our permission ids are unique per file (a user's id, "anyoneWithLink"), as in Drive; env0's are global,
    # so permissions are matched on (fileId, id) and reported with Drive's id
    keyed = lambda ps: [{**p, "_k": f"{p['fileId']}/{p['id']}"} for p in ps]  # noqa: E731
    perms = _diff(keyed(old["permissions"]), keyed(cur["permissions"]), key="_k", deleted="full")
    strip = lambda p: {"id": p["id"], **{k: v for k, v in p.items() if k not in ("_k", "id")}}  # noqa: E731
    perms = {"added": [strip(p) for p in perms["added"]],
             "updated": [{"id": p["_k"].split("/", 1)[1], **{k: v for k, v in p.items() if k != "_k"}}
                         for p in perms["updated"]],
             "deleted": [{"id": p["id"]} for p in perms["deleted"]]}
    return {"files": _diff(old["files"], cur["files"], deleted="id"), "permissions": perms}


def docs_diff(old: dict, cur: dict) -> dict:
    return _by_owner(old, cur, "users", _docs_user_diff)


def _docs_user_diff(o: dict, u: dict) -> dict | None:
    ud = {"documents": _diff(o["documents"], u["documents"])}
    comments = _diff(o["comments"], u["comments"])
    if any(comments.values()):
        ud["comments"] = comments
    return ud if any(ud["documents"].values()) or "comments" in ud else None


def slack_diff(old: dict, cur: dict) -> dict:
    return _by_owner(old, cur, "workspaces", _slack_workspace_diff)


def _members(xs: list[dict]) -> set[tuple[str, str]]:
    return {(m["channel_id"], m["user_id"]) for m in xs}


def _slack_workspace_diff(o: dict, w: dict) -> dict | None:
    cm, om = _members(w["channel_members"]), _members(o["channel_members"])
    wd = {"messages": _diff(o["messages"], w["messages"], key="ts", deleted="id"),
          "channels": _diff(o["channels"], w["channels"], updated="full", deleted="id"),
          "reactions": {k: v for k, v in _diff(o["reactions"], w["reactions"], deleted="id").items() if k != "updated"},
          "channel_members": {"added": [{"channel_id": c, "user_id": u} for c, u in sorted(cm - om)],
                              "deleted": [{"channel_id": c, "user_id": u} for c, u in sorted(om - cm)]}}
    return wd if _any(wd) else None


def calendar_diff(old: dict, cur: dict) -> dict:
    out: dict[str, dict] = {"users": {}}
    for uid in sorted(set(old["users"]) | set(cur["users"])):
        o, c = old["users"].get(uid, {}), cur["users"].get(uid, {})
        out["users"][uid] = {k: _diff(o.get(k, []), c.get(k, []), updated="full") for k in ("calendars", "acls", "events")}
    return out


DIFF: dict[str, Callable[[dict, dict], dict]] = {
    "gmail": gmail_diff, "drive": drive_diff, "docs": docs_diff, "slack": slack_diff, "calendar": calendar_diff,
    "stripe": stripe_diff, "auth": auth_diff}
