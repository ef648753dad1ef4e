"""Gmail users.drafts: drafts are DRAFT-labelled messages composed like sent ones."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, not_found
from ...paging import check_size, page
from .data_model import Draft
from .mailbox import P
from .messages import Messages


class Drafts(Messages):
    def _draft_json(self, d: Draft, full: bool = False) -> dict[str, Any]:
        m = self.db.messages[d.messageId]
        msg = self.render(m, "full") if full else {"id": m.id, "threadId": m.threadId, "labelIds": list(m.labelIds)}
        return {"id": d.id, "message": msg}

    @api("gmail.users.drafts.create", f"POST {P}/drafts", "Save a draft (to/subject/body_text or body.message.raw).",
         writes=True, params={"to": "", "cc": "", "subject": "", "body_text": "", "threadId": "",
                              "body": "{message: {raw, threadId}}"}, upload=f"/upload/{P}/drafts")
    def drafts_create(self, userId: str = "me", body: dict | None = None, to: str | None = None, cc: str | None = None,
                      bcc: str | None = None, subject: str | None = None, body_text: str | None = None,
                      threadId: str | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        inner = (body or {}).get("message") or {}
        if not isinstance(inner, dict):
            raise bad_request("Invalid JSON payload received.", "invalidArgument")
        m = self._compose(owner, inner, to, cc, bcc, subject, body_text, threadId, labels=("DRAFT",))
        d = Draft(id="r" + self.new_id("draft", "0123456789", 19), userId=owner, messageId=m.id)
        self.db.drafts[d.id] = d
        return self._draft_json(d)

    @api("gmail.users.drafts.list", f"GET {P}/drafts", "List drafts.", params={"maxResults": "", "pageToken": ""})
    def drafts_list(self, userId: str = "me", maxResults: int | None = None, pageToken: str | None = None,
                    q: str | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        size = check_size(maxResults, 100, 500, "maxResults")
        ds = sorted((d for d in self.db.drafts.values() if d.userId == owner),  # stable: drafts in the order stored
                    key=lambda d: self.db.messages[d.messageId].internalDate)
        ds.reverse()
        chunk, nxt = page(ds, pageToken, size)
        out: dict[str, Any] = {}
        if chunk:
            out["drafts"] = [{"id": d.id, "message": {"id": d.messageId,
                                                      "threadId": self.db.messages[d.messageId].threadId}} for d in chunk]
        if nxt:
            out["nextPageToken"] = nxt
        out["resultSizeEstimate"] = len(ds)
        return out

    def _draft(self, owner: str, did: Any) -> Draft:
        d = self.db.drafts.get(did) if isinstance(did, str) else None
        if d is None or d.userId != owner:
            raise not_found()
        return d

    @api("gmail.users.drafts.get", f"GET {P}/drafts/{{id}}", "Get a draft.", params={"id": ""})
    def drafts_get(self, id: str, userId: str = "me", format: str = "full") -> dict[str, Any]:
        return self._draft_json(self._draft(self.owner(userId), id), full=True)

    @api("gmail.users.drafts.update", f"PUT {P}/drafts/{{id}}",
         "Replace a draft's content (to/subject/body_text or body.message.raw).", writes=True,
         params={"id": "draft id", "to": "", "cc": "", "subject": "", "body_text": "", "threadId": "",
                 "body": "{message: {raw, threadId}}"}, upload=f"/upload/{P}/drafts/{{id}}")
    def drafts_update(self, id: str, userId: str = "me", body: dict | None = None, to: str | None = None,
                      cc: str | None = None, bcc: str | None = None, subject: str | None = None,
                      body_text: str | None = None, threadId: str | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        d = self._draft(owner, id)
        body = body or {}
        inner = body.get("message", body if "raw" in body else {})  # an upload's metadata is the message itself
        if not isinstance(inner, dict):
            raise bad_request("Invalid JSON payload received.", "invalidArgument")
        if "id" in body and body["id"] != d.id:
            raise bad_request("Draft id in the body does not match the path.", "invalidArgument")
        old = self.db.messages[d.messageId]
        thread = threadId or inner.get("threadId") or None
        m = self._compose(owner, inner, to, cc, bcc, subject, body_text, thread, labels=("DRAFT",))
        self.drop(old)  # the draft's message is replaced by a new one (a new message id), as in Gmail
        self.db.drafts[d.id] = Draft(id=d.id, userId=owner, messageId=m.id)
        return self._draft_json(self.db.drafts[d.id])

    @api("gmail.users.drafts.send", f"POST {P}/drafts/send", "Send an existing draft.", writes=True,
         params={"body": "{id: draft id}"}, upload=f"/upload/{P}/drafts/send")
    def drafts_send(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        d = self._draft(owner, body.get("id"))
        m = self.db.messages[d.messageId]
        if not (m.to or m.cc or m.bcc):
            raise bad_request("Invalid To header", "invalidArgument")
        del self.db.drafts[d.id]
        m = self.relabel(m, add=("SENT",), remove=("DRAFT",))
        m = self.put(m.model_copy(update={"internalDate": self.ws.now_ms()}))
        self.deliver(m)
        m = self.db.messages[m.id]
        return {"id": m.id, "threadId": m.threadId, "labelIds": list(m.labelIds)}

    @api("gmail.users.drafts.delete", f"DELETE {P}/drafts/{{id}}", "Delete a draft.", writes=True, status=204,
         params={"id": ""})
    def drafts_delete(self, id: str, userId: str = "me") -> None:
        d = self._draft(self.owner(userId), id)
        self.drop(self.db.messages[d.messageId])
