"""Drive v3 comments get/update/delete and replies.* (list / get / create / update / delete).

As in Drive, a comment is resolved or reopened by a reply whose `action` is "resolve" or "reopen"
(`resolved` is read-only on the comment); only a comment's or reply's author may edit it, and a
deleted comment or reply stays as a `deleted: true` stub with no content (listed with includeDeleted).
`fields` is required on every comments/replies method, as in Drive v3.
"""

from __future__ import annotations

from typing import Any

from ...base import DRIVE_ALPHABET, api
from ...errors import bad_request, forbidden, google_error
from ...paging import check_size, page, select_fields
from .data_model import Comment, Reply

D = "drive/v3"
C = f"{D}/files/{{fileId}}/comments/{{commentId}}"
_FIELDS = "required, e.g. id,content,resolved"


def _need_fields(fields: str | None) -> str:
    if not fields:
        raise bad_request("The 'fields' parameter is required for this operation.", "required", "fields")
    return fields


class Replies:
    db: Any
    ws: Any

    def replies_of(self, comment_id: str, include_deleted: bool = False) -> list[Reply]:
        """A comment's replies, oldest first (verifier helper)."""
        rows = [r for r in self.db.replies.values() if r.commentId == comment_id and (include_deleted or not r.deleted)]
        return sorted(rows, key=lambda r: r.createdTime)  # stable: ties (a frozen clock) keep creation order

    def reply_json(self, r: Reply) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "drive#reply", "id": r.id, "createdTime": r.createdTime,
                               "modifiedTime": r.modifiedTime, "author": {"kind": "drive#user", "displayName": r.authorName,
                                                                          "me": r.authorEmail == self.ws.me.email},
                               "deleted": bool(r.deleted)}
        if not r.deleted:
            out.update(content=r.content, htmlContent=r.content)
        if r.action:
            out["action"] = r.action
        return out

    def _comment(self, fileId: str, commentId: str, need: int = 1) -> Comment:
        self._file(fileId, need=need)  # type: ignore[attr-defined]
        c = self.db.comments.get(commentId)
        if c is None or c.fileId != fileId:
            raise google_error(404, f"Comment not found: {commentId}.", "notFound", "commentId")
        return c

    def _author_only(self, email: str) -> None:
        if email != self.ws.me.email:
            raise forbidden("The user does not have sufficient permissions for this comment.",
                            "insufficientFilePermissions")

    # -- comments ---------------------------------------------------------------------------------
    @api("drive.comments.get", f"GET {C}", "Get a comment with its replies.",
         params={"fileId": "", "commentId": "", "fields": _FIELDS})
    def comments_get(self, fileId: str, commentId: str, fields: str | None = None,
                     includeDeleted: bool = False) -> dict[str, Any]:
        fields = _need_fields(fields)
        c = self._comment(fileId, commentId)
        if c.deleted and not includeDeleted:
            raise google_error(404, f"Comment not found: {commentId}.", "notFound", "commentId")
        return select_fields(self.comment_json(c), fields)  # type: ignore[attr-defined]

    @api("drive.comments.update", f"PATCH {C}", "Edit your comment's text.", writes=True,
         params={"fileId": "", "commentId": "", "fields": _FIELDS, "body": "{content}"})
    def comments_update(self, fileId: str, commentId: str, body: dict, fields: str | None = None) -> dict[str, Any]:
        fields = _need_fields(fields)
        c = self._comment(fileId, commentId, need=2)
        if c.deleted:
            raise google_error(404, f"Comment not found: {commentId}.", "notFound", "commentId")
        self._author_only(c.authorEmail)
        if set(body) - {"content"}:
            raise bad_request(f"The resource body includes fields which are not directly writable: "
                              f"{sorted(set(body) - {'content'})}", "fieldNotWritable")
        content = body.get("content")
        if not isinstance(content, str) or not content.strip():
            raise bad_request("The comment content field is required.", "required", "content")
        c = c.model_copy(update={"content": content.strip(), "modifiedTime": self.ws.now_rfc3339()})
        self.db.comments[c.id] = c
        return select_fields(self.comment_json(c), fields)  # type: ignore[attr-defined]

    @api("drive.comments.delete", f"DELETE {C}", "Delete your comment (its replies go with it).", writes=True,
         status=204, params={"fileId": "", "commentId": ""})
    def comments_delete(self, fileId: str, commentId: str) -> None:
        c = self._comment(fileId, commentId, need=2)
        if c.deleted:
            raise google_error(404, f"Comment not found: {commentId}.", "notFound", "commentId")
        self._author_only(c.authorEmail)
        self.db.comments[c.id] = c.model_copy(update={"deleted": True, "content": "",
                                                      "modifiedTime": self.ws.now_rfc3339()})

    # -- replies ----------------------------------------------------------------------------------
    @api("drive.replies.list", f"GET {C}/replies", "List a comment's replies.",
         params={"fileId": "", "commentId": "", "fields": "required, e.g. replies(id,content,action)", "pageSize": "",
                 "pageToken": ""})
    def replies_list(self, fileId: str, commentId: str, fields: str | None = None, pageSize: int | None = None,
                     pageToken: str | None = None, includeDeleted: bool = False) -> dict[str, Any]:
        fields = _need_fields(fields)
        self._comment(fileId, commentId)
        chunk, nxt = page(self.replies_of(commentId, includeDeleted), pageToken, check_size(pageSize, 20, 100, "pageSize"))
        out: dict[str, Any] = {"kind": "drive#replyList", "replies": [self.reply_json(r) for r in chunk]}
        if nxt:
            out["nextPageToken"] = nxt
        return select_fields(out, fields)

    def _reply(self, commentId: str, replyId: str) -> Reply:
        r = self.db.replies.get(replyId)
        if r is None or r.commentId != commentId:
            raise google_error(404, f"Reply not found: {replyId}.", "notFound", "replyId")
        return r

    @api("drive.replies.get", f"GET {C}/replies/{{replyId}}", "Get a reply.",
         params={"fileId": "", "commentId": "", "replyId": "", "fields": _FIELDS})
    def replies_get(self, fileId: str, commentId: str, replyId: str, fields: str | None = None,
                    includeDeleted: bool = False) -> dict[str, Any]:
        fields = _need_fields(fields)
        self._comment(fileId, commentId)
        r = self._reply(commentId, replyId)
        if r.deleted and not includeDeleted:
            raise google_error(404, f"Reply not found: {replyId}.", "notFound", "replyId")
        return select_fields(self.reply_json(r), fields)

    @api("drive.replies.create", f"POST {C}/replies",
         "Reply to a comment; body.action 'resolve' resolves it, 'reopen' reopens it.", writes=True,
         params={"fileId": "", "commentId": "", "fields": _FIELDS, "body": "{content, action: resolve|reopen}"})
    def replies_create(self, fileId: str, commentId: str, body: dict, fields: str | None = None) -> dict[str, Any]:
        fields = _need_fields(fields)
        c = self._comment(fileId, commentId, need=2)
        if c.deleted:
            raise google_error(404, f"Comment not found: {commentId}.", "notFound", "commentId")
        action, content = body.get("action"), body.get("content")
        if action is not None and action not in ("resolve", "reopen"):
            raise bad_request(f"Invalid value for action: {action}", "invalid", "action")
        if content is not None and not isinstance(content, str):
            raise bad_request("Invalid value for content.", "invalid", "content")
        if not (content or "").strip() and action is None:
            raise bad_request("The reply content field is required.", "required", "content")
        r = self.add_reply(c.id, (content or "").strip(), action=action)
        return select_fields(self.reply_json(r), fields)

    @api("drive.replies.update", f"PATCH {C}/replies/{{replyId}}", "Edit your reply's text.", writes=True,
         params={"fileId": "", "commentId": "", "replyId": "", "fields": _FIELDS, "body": "{content}"})
    def replies_update(self, fileId: str, commentId: str, replyId: str, body: dict,
                       fields: str | None = None) -> dict[str, Any]:
        fields = _need_fields(fields)
        self._comment(fileId, commentId, need=2)
        r = self._reply(commentId, replyId)
        if r.deleted:
            raise google_error(404, f"Reply not found: {replyId}.", "notFound", "replyId")
        self._author_only(r.authorEmail)
        content = body.get("content")
        if set(body) - {"content"} or not isinstance(content, str) or not content.strip():
            raise bad_request("The reply content field is required (and the only one writable).", "required", "content")
        r = r.model_copy(update={"content": content.strip(), "modifiedTime": self.ws.now_rfc3339()})
        self.db.replies[r.id] = r
        return select_fields(self.reply_json(r), fields)

    @api("drive.replies.delete", f"DELETE {C}/replies/{{replyId}}", "Delete your reply.", writes=True, status=204,
         params={"fileId": "", "commentId": "", "replyId": ""})
    def replies_delete(self, fileId: str, commentId: str, replyId: str) -> None:
        self._comment(fileId, commentId, need=2)
        r = self._reply(commentId, replyId)
        if r.deleted:
            raise google_error(404, f"Reply not found: {replyId}.", "notFound", "replyId")
        self._author_only(r.authorEmail)
        self.db.replies[r.id] = r.model_copy(update={"deleted": True, "content": "",
                                                     "modifiedTime": self.ws.now_rfc3339()})

    # -- seeding helper ---------------------------------------------------------------------------
    def add_reply(self, comment_id: str, content: str, *, author: str | None = None,
                  action: str | None = None) -> Reply:
        """Plant (or record) a reply; action "resolve"/"reopen" also resolves/reopens the comment."""
        c = self.db.comments[comment_id]
        email = author or self.ws.me.email
        person = self.ws.person(email)
        now = self.ws.now_rfc3339()
        r = Reply(id=self.new_id("reply", DRIVE_ALPHABET, 22), commentId=c.id, fileId=c.fileId, authorEmail=email,  # type: ignore[attr-defined]
                  authorName=person.name if person else email.split("@")[0], content=content, action=action,
                  createdTime=now, modifiedTime=now)
        self.db.replies[r.id] = r
        if action is not None:
            self.db.comments[c.id] = c.model_copy(update={"resolved": action == "resolve", "modifiedTime": now})
        return r
