"""Drive comments (comments.list / comments.create): env0 task packages read and leave comments on files.

A mixin of `Drive`: the handlers use its `_file` access check; `fields` is required, as in Drive v3.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import DRIVE_ALPHABET, api
from ...errors import bad_request
from ...paging import check_size, page, select_fields
from .data_model import Comment

D = "drive/v3"


class Comments:
    db: Any
    ws: Any

    def comment_json(self, c: Comment) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "drive#comment", "id": c.id, "createdTime": c.createdTime,
                               "modifiedTime": c.modifiedTime, "author": {"kind": "drive#user", "displayName": c.authorName,
                                                                          "me": c.authorEmail == self.ws.me.email},
                               "content": c.content, "htmlContent": c.content, "deleted": bool(c.deleted),
                               "resolved": c.resolved,
                               "replies": [self.reply_json(r) for r in self.replies_of(c.id)]}  # type: ignore[attr-defined]
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
