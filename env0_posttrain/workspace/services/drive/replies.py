"""Drive v3 replies (list, get, create, update, delete).

As in Drive, a comment is resolved or reopened by a reply whose `action` is "resolve" or "reopen"
(`resolved` is read-only on the comment); only a reply's author may edit it, and a deleted reply stays as a
`deleted: true` stub with no content (listed with includeDeleted).
"""

from __future__ import annotations

from typing import Any

from ...base import DRIVE_ALPHABET, api
from ...errors import bad_request, google_error
from ...paging import check_size, page, select_fields
from .comments import _FIELDS, C, Comments, _need_fields
from .data_model import Reply


class Replies(Comments):
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
        c = self._comment(fileId, commentId, need=2, deleted=False)
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
        r = Reply(id=self.new_id("reply", DRIVE_ALPHABET, 22), commentId=c.id, fileId=c.fileId, authorEmail=email,
                  authorName=person.name if person else email.split("@")[0], content=content, action=action,
                  createdTime=now, modifiedTime=now)
        self.db.replies[r.id] = r
        if action is not None:
            self.db.comments[c.id] = c.model_copy(update={"resolved": action == "resolve", "modifiedTime": now})
        return r
