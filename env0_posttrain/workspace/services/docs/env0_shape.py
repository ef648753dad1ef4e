"""Our Docs rows in env0's mock-gdoc /_admin/state and /_admin/diff JSON (documents with their Drive file's times,
comments with replies); an update reports its changed fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..env0_shapes import by_owner, diff_rows, iso, now_iso
from ..drive.env0_shape import comment_replies

if TYPE_CHECKING:
    from ...environment import Workspace


def docs_state(ws: Workspace) -> dict[str, Any]:
    docs = []
    for d in ws.docs.db.documents.values():
        f = ws.drive.db.files.get(d.documentId)
        rendered = ws.docs.render(d)
        docs.append({"id": d.documentId, "title": d.title, "body": rendered.get("body", {}),
                     "revisionId": str(d.revision), "createdTime": iso(f.createdTime) if f else None,
                     "modifiedTime": iso(f.modifiedTime) if f else None, "trashed": bool(f and f.trashed)})
    me = ws.me
    comments = [{"id": c.id, "documentId": c.fileId, "authorId": c.authorEmail, "content": c.content,
                 "resolved": c.resolved, "quotedText": c.quotedText, "replies": comment_replies(ws, c.id),
                 "createdTime": iso(c.createdTime),
                 "modifiedTime": iso(c.modifiedTime)}
                for c in ws.drive.db.comments.values() if c.fileId in ws.docs.db.documents and not c.deleted]
    return {"users": {"user1": {"user": {"id": "user1", "email": me.email, "displayName": me.name},
                                "documents": docs, "comments": comments, "permissions": [], "revisions": []}},
            "timestamp": now_iso(ws)}


def docs_diff(old: dict, cur: dict) -> dict:
    return by_owner(old, cur, "users", _docs_user_diff)


def _docs_user_diff(o: dict, u: dict) -> dict | None:
    ud = {"documents": diff_rows(o["documents"], u["documents"])}
    comments = diff_rows(o["comments"], u["comments"])
    if any(comments.values()):
        ud["comments"] = comments
    return ud if any(ud["documents"].values()) or "comments" in ud else None

