"""env0's state shapes for the Gmail settings and Docs comment replies (read by env0 verifiers), from our rows."""

from __future__ import annotations

from typing import Any

from ....workspace.environment import Workspace


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


def comment_replies(ws: Workspace, comment_id: str) -> list[dict[str, Any]]:
    return [{"id": r.id, "commentId": r.commentId, "authorId": r.authorEmail, "content": r.content,
             "createdTime": r.createdTime.replace(".000Z", ""), "modifiedTime": r.modifiedTime.replace(".000Z", "")}
            for r in ws.drive.replies_of(comment_id)]
