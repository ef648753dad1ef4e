"""Our Gmail rows in env0's mock-gmail /_admin/state and /_admin/diff JSON (`users.<id>.messages[].isSent`, the
settings env0 puts beside a user's messages); an update reports its changed fields and label changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..env0_shapes import by_key, by_owner, diff_rows, iso_ms, now_iso

if TYPE_CHECKING:
    from ...environment import Workspace


def gmail_settings(ws: Workspace) -> dict[str, Any]:
    """The keys env0's mock-gmail puts beside a user's messages: filters, sendAs, forwardingAddresses,
    delegates, and vacationSettings / autoForwarding once they were set."""
    g, me = ws.gmail, ws.me.email
    crit = ("from", "to", "subject", "query", "hasAttachment", "negatedQuery", "excludeChats", "size", "sizeComparison")
    out: dict[str, Any] = {
        "filters": [{"id": f.id, "criteria": {k: f.criteria.get(k) for k in crit},
                     "action": {"addLabelIds": list(f.action.get("addLabelIds", [])),
                                "removeLabelIds": list(f.action.get("removeLabelIds", [])),
                                "forward": f.action.get("forward")}} for f in g.filters_of(me)],
        "sendAs": [{"treatAsAlias": False, "verificationStatus": "accepted", **s}
                   for s in g.settings_sendAs_list()["sendAs"]],
        "forwardingAddresses": g.settings_forwardingAddresses_list().get("forwardingAddresses", []),
        "delegates": g.settings_delegates_list().get("delegates", []),
    }
    for name, key in (("vacation", "vacationSettings"), ("autoForwarding", "autoForwarding")):
        if f"{me}/{name}" in g.db.mailSettings:
            out[key] = g.setting(me, name)
    return out


def gmail_state(ws: Workspace) -> dict[str, Any]:
    users = {"user1": _mailbox(ws, ws.me.email, "user1", ws.me.name, gmail_settings(ws))}
    for uid in ws.auth.db.extra_mailboxes:  # another account with a mailbox here (auth's personal-account packages)
        u = ws.auth.db.users[uid]
        users[uid] = _mailbox(ws, u.email, uid, u.display_name, {})
    return {"users": users, "timestamp": now_iso(ws)}


def _mailbox(ws: Workspace, me: str, uid: str, name: str, settings: dict[str, Any]) -> dict[str, Any]:
    msgs = []
    for m in ws.gmail.db.messages.values():
        if m.userId != me:
            continue
        labels = set(m.labelIds)
        msgs.append({"id": m.id, "threadId": m.threadId, "sender": m.sender, "to": ", ".join(m.to),
                     "cc": ", ".join(m.cc), "bcc": ", ".join(m.bcc), "subject": m.subject, "snippet": m.body[:200],
                     "body": m.body, "bodyHtml": "", "internalDate": iso_ms(m.internalDate),
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


def gmail_diff(old: dict, cur: dict) -> dict:
    return by_owner(old, cur, "users", _gmail_user_diff)


def _gmail_user_diff(o: dict, u: dict) -> dict | None:
    msgs = diff_rows(o["messages"], u["messages"])
    before = by_key(o["messages"], "id")
    for upd in msgs["updated"]:
        if "labelIds" in upd:
            was, now = set(before[upd["id"]]["labelIds"]), set(upd["labelIds"])
            if now - was:
                upd["labelsAdded"] = sorted(now - was)
            if was - now:
                upd["labelsRemoved"] = sorted(was - now)
    ud: dict[str, Any] = {"messages": msgs}
    ol, cl = by_key(o["labels"], "id"), by_key(u["labels"], "id")
    labels = {"added": [v for k, v in cl.items() if k not in ol], "removed": [v for k, v in ol.items() if k not in cl]}
    if any(labels.values()):
        ud["labels"] = labels
    return ud if any(msgs.values()) or "labels" in ud else None

