"""Gmail users.messages: list, get, send, modify, trash, delete, insert/import and attachments.

Import files mail as received (the mailbox's filters apply); insert stores it as is, as Gmail does."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from typing import Any

from ...base import api
from ...errors import bad_request
from ...paging import check_size, page
from .data_model import Message
from .mailbox import Mailbox, P
from .mime import parse_raw, split_addresses, unb64url

_FORMATS = ("minimal", "full", "raw", "metadata")


class Messages(Mailbox):
    @api("gmail.users.messages.list", f"GET {P}/messages", "List message ids (newest first); get each for content.",
         params={"q": "Gmail search, e.g. 'from:ana is:unread after:2026/03/01'", "maxResults": "", "pageToken": "",
                 "labelIds": ""})
    def messages_list(self, userId: str = "me", q: str | None = None, maxResults: int | None = None,
                      pageToken: str | None = None, labelIds: list[str] | None = None,
                      includeSpamTrash: bool = False) -> dict[str, Any]:
        owner = self.owner(userId)
        size = check_size(maxResults, 100, 500, "maxResults")
        found = self.search(owner, q, labelIds, includeSpamTrash)
        chunk, nxt = page(found, pageToken, size)
        out: dict[str, Any] = {}
        if chunk:
            out["messages"] = [{"id": m.id, "threadId": m.threadId} for m in chunk]
        if nxt:
            out["nextPageToken"] = nxt
        out["resultSizeEstimate"] = len(found)
        return out

    @api("gmail.users.messages.get", f"GET {P}/messages/{{id}}", "Get a message (headers, body, labels).",
         params={"id": "message id", "format": "full|metadata|minimal|raw"})
    def messages_get(self, id: str, userId: str = "me", format: str = "full",
                     metadataHeaders: list[str] | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        if format not in _FORMATS:
            raise bad_request(f"Invalid value at 'format' ({format})", "invalidArgument", "format")
        return self.render(self._msg(owner, id), format, metadataHeaders)

    @api("gmail.users.messages.send", f"POST {P}/messages/send",
         "Send an email. Give to/subject/body_text (or body.raw). threadId replies in a thread.", writes=True,
         params={"to": "comma-separated emails", "cc": "", "subject": "", "body_text": "plain text body",
                 "threadId": "", "body": "{raw: base64url RFC 822}"},
         upload=f"/upload/{P}/messages/send")
    def messages_send(self, userId: str = "me", body: dict | None = None, to: str | None = None,
                      cc: str | None = None, bcc: str | None = None, subject: str | None = None,
                      body_text: str | None = None, threadId: str | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        m = self._compose(owner, body, to, cc, bcc, subject, body_text, threadId, labels=("SENT",))
        self.deliver(m)
        m = self.db.messages[m.id]
        return {"id": m.id, "threadId": m.threadId, "labelIds": list(m.labelIds)}

    def _compose(self, owner: str, body: dict | None, to: str | None, cc: str | None, bcc: str | None,
                 subject: str | None, body_text: str | None, thread_id: str | None, labels: tuple[str, ...]) -> Message:
        body = body or {}
        if not isinstance(body, dict):
            raise bad_request("Invalid JSON payload received.", "invalidArgument")
        thread_id = thread_id or body.get("threadId")
        if body.get("raw"):
            if not isinstance(body["raw"], str):
                raise bad_request("Invalid value for ByteString: raw", "invalidArgument")
            f = parse_raw(body["raw"], owner)
        else:
            f = {"to": split_addresses(to, owner), "cc": split_addresses(cc, owner),
                 "bcc": split_addresses(bcc, owner),
                 "subject": subject or "", "body": body_text or "", "inReplyTo": None, "references": None,
                 "attachments": []}
        if "SENT" in labels and not (f["to"] or f["cc"] or f["bcc"]):
            raise bad_request("Invalid To header", "invalidArgument")
        tid = self.thread_for(owner, f["inReplyTo"], thread_id if isinstance(thread_id, str) else None)
        return self.store(owner, sender=self.from_header(owner), to=f["to"], cc=f["cc"], bcc=f["bcc"],
                          subject=f["subject"], body=f["body"], labels=labels, thread_id=tid,
                          in_reply_to=f["inReplyTo"], references=f["references"], attachments=f["attachments"])

    @api("gmail.users.messages.modify", f"POST {P}/messages/{{id}}/modify",
         "Add/remove labels (e.g. remove UNREAD to mark read).", writes=True,
         params={"id": "", "body": "{addLabelIds: [..], removeLabelIds: [..]}"})
    def messages_modify(self, id: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        m = self._msg(owner, id)
        add, remove = body.get("addLabelIds") or [], body.get("removeLabelIds") or []
        if not isinstance(add, list) or not isinstance(remove, list):
            raise bad_request("Invalid JSON payload received. addLabelIds must be a list", "invalidArgument")
        self.check_labels(owner, add + remove)
        m = self.relabel(m, add, remove)
        return {"id": m.id, "threadId": m.threadId, "labelIds": list(m.labelIds)}

    @api("gmail.users.messages.batchModify", f"POST {P}/messages/batchModify",
         "Add/remove labels on many messages at once (up to 1000 ids).", writes=True, status=204,
         params={"body": "{ids: [..], addLabelIds: [..], removeLabelIds: [..]}"})
    def messages_batchModify(self, body: dict, userId: str = "me") -> None:
        owner = self.owner(userId)
        ids, add, remove = body.get("ids") or [], body.get("addLabelIds") or [], body.get("removeLabelIds") or []
        if not all(isinstance(x, list) for x in (ids, add, remove)):
            raise bad_request("Invalid JSON payload received. ids, addLabelIds and removeLabelIds must be lists",
                              "invalidArgument")
        if len(ids) > 1000:
            raise bad_request("Too many ids (at most 1000)", "invalidArgument")
        self.check_labels(owner, add + remove)
        for m in [self._msg(owner, i) for i in ids]:  # every id is checked before any message changes
            self.relabel(m, add, remove)

    @api("gmail.users.messages.batchDelete", f"POST {P}/messages/batchDelete",
         "Delete many messages permanently (not to trash).", writes=True, status=204,
         params={"body": "{ids: [..]}"})
    def messages_batchDelete(self, body: dict, userId: str = "me") -> None:
        owner = self.owner(userId)
        ids = body.get("ids") or []
        if not isinstance(ids, list):
            raise bad_request("Invalid JSON payload received. ids must be a list", "invalidArgument")
        if len(ids) > 1000:
            raise bad_request("Too many ids (at most 1000)", "invalidArgument")
        for m in [self._msg(owner, i) for i in ids]:  # every id is checked before any message goes
            self.messages_delete(m.id, userId)

    @api("gmail.users.messages.trash", f"POST {P}/messages/{{id}}/trash", "Move a message to trash.", writes=True,
         params={"id": ""})
    def messages_trash(self, id: str, userId: str = "me") -> dict[str, Any]:
        m = self.relabel(self._msg(self.owner(userId), id), add=("TRASH",), remove=("INBOX",))
        return self.render(m, "minimal")

    @api("gmail.users.messages.untrash", f"POST {P}/messages/{{id}}/untrash", "Restore a message from trash.",
         writes=True, params={"id": ""})
    def messages_untrash(self, id: str, userId: str = "me") -> dict[str, Any]:
        m = self._msg(self.owner(userId), id)
        add = ("INBOX",) if "SENT" not in m.labelIds or m.userId != m.sender else ()
        return self.render(self.relabel(m, add=add, remove=("TRASH",)), "minimal")

    @api("gmail.users.messages.delete", f"DELETE {P}/messages/{{id}}", "Permanently delete a message.",
         writes=True, status=204, params={"id": ""})
    def messages_delete(self, id: str, userId: str = "me") -> None:
        self.drop(self._msg(self.owner(userId), id))

    @api("gmail.users.messages.attachments.get", f"GET {P}/messages/{{messageId}}/attachments/{{id}}",
         "Get attachment data (base64url).", params={"messageId": "", "id": "attachment id"})
    def messages_attachments_get(self, messageId: str, id: str, userId: str = "me") -> dict[str, Any]:
        m = self._msg(self.owner(userId), messageId)
        for a in m.attachments:
            if a.attachmentId == id:
                return {"attachmentId": a.attachmentId, "size": a.size, "data": a.data}
        raise bad_request("Invalid attachment token", "invalidArgument")

    def _put_raw(self, owner: str, body: dict, date_source: str, deleted: bool, received: bool) -> Message:
        raw = body.get("raw")
        if not isinstance(raw, str) or not raw:
            raise bad_request("'raw' RFC822 payload message string or uploading message via /upload/* URL required",
                              "invalidArgument")
        if date_source not in ("receivedTime", "dateHeader"):
            raise bad_request(f"Invalid value at 'internal_date_source' ({date_source})", "invalidArgument")
        labels = body.get("labelIds") or []
        if not isinstance(labels, list):
            raise bad_request("Invalid JSON payload received. labelIds must be a list", "invalidArgument")
        self.check_labels(owner, labels)
        from .mime import parse_raw

        f = parse_raw(raw)
        when = self.ws.now_ms()
        headers = BytesParser(policy=policy.compat32).parsebytes(unb64url(raw), headersonly=True)
        if date_source == "dateHeader" and headers.get("Date"):
            try:
                when = int(parsedate_to_datetime(str(headers["Date"])).timestamp() * 1000)
            except (TypeError, ValueError, IndexError):
                pass
        tid = body.get("threadId")
        tid = self.thread_for(owner, f["inReplyTo"], tid if isinstance(tid, str) and tid else None)
        m = self.store(owner, sender=str(f.get("from") or owner), to=f["to"], cc=f["cc"], bcc=f["bcc"],
                       subject=f["subject"], body=f["body"], labels=tuple(labels), internal_date=when, thread_id=tid,
                       in_reply_to=f["inReplyTo"], references=f["references"], attachments=f["attachments"],
                       message_id_header=str(headers["Message-ID"]).strip() if headers.get("Message-ID") else None)
        if received:
            m = self.filtered(owner, m)  # type: ignore[attr-defined]
        if deleted:
            self.drop(m)
        return m

    @api("gmail.users.messages.insert", f"POST {P}/messages",
         "Put a message straight into the mailbox (no sending, no filters), like IMAP APPEND.", writes=True,
         params={"body": "{raw: base64url RFC 822, labelIds: [..], threadId}", "internalDateSource": "receivedTime|dateHeader"},
         upload=f"/upload/{P}/messages")
    def messages_insert(self, body: dict, userId: str = "me", internalDateSource: str = "receivedTime",
                        deleted: bool = False) -> dict[str, Any]:
        m = self._put_raw(self.owner(userId), body, internalDateSource, deleted, received=False)
        return {"id": m.id, "threadId": m.threadId, "labelIds": list(self.db.messages.get(m.id, m).labelIds)}

    @api("gmail.users.messages.import", f"POST {P}/messages/import",
         "Import a message as if received by mail (the mailbox's filters apply).", writes=True,
         params={"body": "{raw: base64url RFC 822, labelIds: [..], threadId}", "internalDateSource": "dateHeader|receivedTime"},
         upload=f"/upload/{P}/messages/import")
    def messages_import(self, body: dict, userId: str = "me", internalDateSource: str = "dateHeader",
                        neverMarkSpam: bool = False, processForCalendar: bool = False,
                        deleted: bool = False) -> dict[str, Any]:
        m = self._put_raw(self.owner(userId), body, internalDateSource, deleted, received=True)
        return {"id": m.id, "threadId": m.threadId, "labelIds": list(self.db.messages.get(m.id, m).labelIds)}
