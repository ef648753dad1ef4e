"""Drive v3 comments (list, get, create, update, delete): env0 task packages read and leave comments on files.

A comment's JSON carries its replies; only its author may edit or delete it, and a deleted comment stays as a
`deleted: true` stub with no content. `fields` is required on every comments/replies method, as in Drive v3.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import DRIVE_ALPHABET, api
from ...errors import bad_request, forbidden, google_error
from ...paging import check_size, page, select_fields
from .data_model import Comment, Reply
from .state import DriveState

D = "drive/v3"


C = f"{D}/files/{{fileId}}/comments/{{commentId}}"

_FIELDS = "required, e.g. id,content,resolved"


def _need_fields(fields: str | None) -> str:
    if not fields:
        raise bad_request("The 'fields' parameter is required for this operation.", "required", "fields")
    return fields


class Comments(DriveState):
    def comment_json(self, c: Comment) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "drive#comment", "id": c.id, "createdTime": c.createdTime,
                               "modifiedTime": c.modifiedTime, "author": {"kind": "drive#user", "displayName": c.authorName,
                                                                          "me": c.authorEmail == self.ws.me.email},
                               "content": c.content, "htmlContent": c.content, "deleted": bool(c.deleted),
                               "resolved": c.resolved,
                               "replies": [self.reply_json(r) for r in self.replies_of(c.id)]}
        if c.deleted:
            del out["content"], out["htmlContent"]
        if c.quotedText is not None:
            out["quotedFileContent"] = {"mimeType": "text/html", "value": c.quotedText}
        return out

    @api("drive.comments.list", f"GET {D}/files/{{fileId}}/comments", "List the comments on a file.",
         params={"fileId": "", "fields": "required, e.g. comments(id,content,author)", "pageSize": "", "pageToken": ""})
    def comments_list(self, fileId: str, fields: str | None = None, pageSize: int | None = None,
                      pageToken: str | None = None, includeDeleted: bool = False) -> dict[str, Any]:
        if not fields:
            raise bad_request("The 'fields' parameter is required for this operation.", "required", "fields")
        self._file(fileId)
        size = check_size(pageSize, 20, 100, "pageSize")
        rows = sorted((c for c in self.db.comments.values() if c.fileId == fileId and (includeDeleted or not c.deleted)),
                      key=lambda c: c.createdTime)  # stable: ties keep creation order
        chunk, nxt = page(rows, pageToken, size)
        out: dict[str, Any] = {"kind": "drive#commentList", "comments": [self.comment_json(c) for c in chunk]}
        if nxt:
            out["nextPageToken"] = nxt
        return select_fields(out, fields)

    @api("drive.comments.create", f"POST {D}/files/{{fileId}}/comments", "Comment on a file.", writes=True,
         params={"fileId": "", "fields": "required, e.g. id,content", "body": "{content, quotedFileContent: {value}}"})
    def comments_create(self, fileId: str, body: dict, fields: str | None = None) -> dict[str, Any]:
        if not fields:
            raise bad_request("The 'fields' parameter is required for this operation.", "required", "fields")
        self._file(fileId, need=2)
        content = str(body.get("content") or "").strip()
        if not content:
            raise bad_request("The comment content field is required.", "required", "content")
        quoted = (body.get("quotedFileContent") or {}).get("value")
        c = self.add_comment(fileId, content, quoted=quoted)
        return select_fields(self.comment_json(c), fields)

    def add_comment(self, file_id: str, content: str, *, author: str | None = None, quoted: str | None = None,
                    when: datetime | None = None) -> Comment:
        """Plant (or record) a comment; author is an email (default: the agent user)."""
        email = author or self.ws.me.email
        person = self.ws.person(email)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S.000Z") if when else self.ws.now_rfc3339()
        c = Comment(id=self.new_id("comment", DRIVE_ALPHABET, 22), fileId=file_id, authorEmail=email,
                    authorName=person.name if person else email.split("@")[0], content=content, quotedText=quoted,
                    createdTime=stamp, modifiedTime=stamp)
        self.db.comments[c.id] = c
        return c

    def _comment(self, fileId: str, commentId: str, need: int = 1, deleted: bool = True) -> Comment:
        """The file's comment; with `deleted=False` a deleted one is not found, as Drive answers for it."""
        self._file(fileId, need=need)
        c = self.db.comments.get(commentId)
        if c is None or c.fileId != fileId or (c.deleted and not deleted):
            raise google_error(404, f"Comment not found: {commentId}.", "notFound", "commentId")
        return c

    def _author_only(self, email: str) -> None:
        if email != self.ws.me.email:
            raise forbidden("The user does not have sufficient permissions for this comment.",
                            "insufficientFilePermissions")

    @api("drive.comments.get", f"GET {C}", "Get a comment with its replies.",
         params={"fileId": "", "commentId": "", "fields": _FIELDS})
    def comments_get(self, fileId: str, commentId: str, fields: str | None = None,
                     includeDeleted: bool = False) -> dict[str, Any]:
        fields = _need_fields(fields)
        c = self._comment(fileId, commentId, deleted=includeDeleted)
        return select_fields(self.comment_json(c), fields)

    @api("drive.comments.update", f"PATCH {C}", "Edit your comment's text.", writes=True,
         params={"fileId": "", "commentId": "", "fields": _FIELDS, "body": "{content}"})
    def comments_update(self, fileId: str, commentId: str, body: dict, fields: str | None = None) -> dict[str, Any]:
        fields = _need_fields(fields)
        c = self._comment(fileId, commentId, need=2, deleted=False)
        self._author_only(c.authorEmail)
        if set(body) - {"content"}:
            raise bad_request(f"The resource body includes fields which are not directly writable: "
                              f"{sorted(set(body) - {'content'})}", "fieldNotWritable")
        content = body.get("content")
        if not isinstance(content, str) or not content.strip():
            raise bad_request("The comment content field is required.", "required", "content")
        c = c.model_copy(update={"content": content.strip(), "modifiedTime": self.ws.now_rfc3339()})
        self.db.comments[c.id] = c
        return select_fields(self.comment_json(c), fields)

    @api("drive.comments.delete", f"DELETE {C}", "Delete your comment (its replies go with it).", writes=True,
         status=204, params={"fileId": "", "commentId": ""})
    def comments_delete(self, fileId: str, commentId: str) -> None:
        c = self._comment(fileId, commentId, need=2, deleted=False)
        self._author_only(c.authorEmail)
        self.db.comments[c.id] = c.model_copy(update={"deleted": True, "content": "",
                                                      "modifiedTime": self.ws.now_rfc3339()})

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
