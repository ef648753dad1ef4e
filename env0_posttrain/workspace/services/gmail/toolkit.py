"""Gmail v1 methods (users.messages / threads / labels / drafts) and the seeding helpers; thread writes,
history, import/insert and watch are in mail_more.py, users.settings.* in settings.py and prefs.py."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, conflict, not_found
from ...paging import check_size, page
from .data_model import SYSTEM_LABELS, Draft, Label, Message
from .mail_more import MailMore
from .mailbox import Mailbox, newest_first, oldest_first
from .mime import b64url, parse_raw, split_addresses
from .prefs import MailPrefs
from .settings import MailSettings

P = "gmail/v1/users/{userId}"
_FORMATS = ("minimal", "full", "raw", "metadata")


class Gmail(MailMore, MailSettings, MailPrefs, Mailbox):
    # -- messages -------------------------------------------------------------------------------
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

    # -- threads --------------------------------------------------------------------------------
    @api("gmail.users.threads.list", f"GET {P}/threads", "List threads (newest first).",
         params={"q": "Gmail search", "maxResults": "", "pageToken": ""})
    def threads_list(self, userId: str = "me", q: str | None = None, maxResults: int | None = None,
                     pageToken: str | None = None, labelIds: list[str] | None = None,
                     includeSpamTrash: bool = False) -> dict[str, Any]:
        owner = self.owner(userId)
        size = check_size(maxResults, 100, 500, "maxResults")
        threads: dict[str, Message] = {}
        for m in self.search(owner, q, labelIds, includeSpamTrash):
            threads.setdefault(m.threadId, m)
        chunk, nxt = page(list(threads.values()), pageToken, size)
        out: dict[str, Any] = {}
        if chunk:
            out["threads"] = [{"id": m.threadId, "snippet": self.render(m, "minimal")["snippet"],
                               "historyId": str(self._thread_history(owner, m.threadId))} for m in chunk]
        if nxt:
            out["nextPageToken"] = nxt
        out["resultSizeEstimate"] = len(threads)
        return out

    def _thread(self, owner: str, tid: str) -> list[Message]:
        msgs = [m for m in self.db.messages.values() if m.userId == owner and m.threadId == tid]
        if not msgs:
            raise not_found()
        return oldest_first(msgs)

    def _thread_history(self, owner: str, tid: str) -> int:
        return max(m.historyId for m in self._thread(owner, tid))

    @api("gmail.users.threads.get", f"GET {P}/threads/{{id}}", "Get all messages of a thread.",
         params={"id": "thread id", "format": "full|metadata|minimal"})
    def threads_get(self, id: str, userId: str = "me", format: str = "full",
                    metadataHeaders: list[str] | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        if format not in _FORMATS:
            raise bad_request(f"Invalid value at 'format' ({format})", "invalidArgument", "format")
        msgs = self._thread(owner, id)
        return {"id": id, "historyId": str(max(m.historyId for m in msgs)),
                "messages": [self.render(m, format, metadataHeaders) for m in msgs]}

    # -- labels ---------------------------------------------------------------------------------
    def _label_json(self, l: Label) -> dict[str, Any]:
        return l.model_dump(mode="json", exclude_none=True, exclude={"userId"})

    @api("gmail.users.labels.list", f"GET {P}/labels", "List labels (system and user) with ids.")
    def labels_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        system = [{"id": n, "name": n, "type": "system"} for n in SYSTEM_LABELS]
        return {"labels": system + [self._label_json(l) for l in sorted(self.user_labels(owner), key=lambda l: l.id)]}

    @api("gmail.users.labels.get", f"GET {P}/labels/{{id}}", "Get a label with message counts.", params={"id": ""})
    def labels_get(self, id: str, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        if id in SYSTEM_LABELS:
            out: dict[str, Any] = {"id": id, "name": id, "type": "system"}
        else:
            l = self.db.labels.get(f"{owner}/{id}")
            if l is None:
                raise not_found()
            out = self._label_json(l)
        msgs = [m for m in self.db.messages.values() if m.userId == owner and id in m.labelIds]
        threads = {m.threadId for m in msgs}
        unread = [m for m in msgs if "UNREAD" in m.labelIds]
        out.update(messagesTotal=len(msgs), messagesUnread=len(unread), threadsTotal=len(threads),
                   threadsUnread=len({m.threadId for m in unread}))
        return out

    @api("gmail.users.labels.create", f"POST {P}/labels", "Create a label.", writes=True,
         params={"body": "{name}"})
    def labels_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        name = self._check_label_name(owner, body.get("name"), None)
        self.db.seq += 1
        lid = f"Label_{self.db.seq}"
        l = Label(id=lid, userId=owner, name=name,
                  messageListVisibility=body.get("messageListVisibility", "show"),
                  labelListVisibility=body.get("labelListVisibility", "labelShow"))
        self.db.labels[f"{owner}/{lid}"] = l
        return self._label_json(l)

    def _check_label_name(self, owner: str, name: Any, own_id: str | None) -> str:
        if not isinstance(name, str) or not name.strip():
            raise bad_request("Invalid label name", "invalidArgument")
        name = name.strip()
        if name.upper() in SYSTEM_LABELS:
            raise bad_request("Invalid label name", "invalidArgument")
        for l in self.user_labels(owner):
            if l.name.lower() == name.lower() and l.id != own_id:
                raise conflict("Label name exists or conflicts", "duplicate")
        return name

    @api("gmail.users.labels.patch", f"PATCH {P}/labels/{{id}}", "Rename or restyle a label.", writes=True,
         params={"id": "", "body": "{name}"})
    def labels_patch(self, id: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        if id in SYSTEM_LABELS:
            raise bad_request(f"Invalid label: {id}", "invalidArgument")
        l = self.db.labels.get(f"{owner}/{id}")
        if l is None:
            raise not_found()
        upd = {k: body[k] for k in ("messageListVisibility", "labelListVisibility", "color") if k in body}
        if "name" in body:
            upd["name"] = self._check_label_name(owner, body["name"], id)
        l = l.model_copy(update=upd)
        self.db.labels[f"{owner}/{id}"] = l
        return self._label_json(l)

    @api("gmail.users.labels.delete", f"DELETE {P}/labels/{{id}}", "Delete a label (messages keep existing).",
         writes=True, status=204, params={"id": ""})
    def labels_delete(self, id: str, userId: str = "me") -> None:
        owner = self.owner(userId)
        if id in SYSTEM_LABELS:
            raise bad_request(f"Invalid label: {id}", "invalidArgument")
        if self.db.labels.pop(f"{owner}/{id}", None) is None:
            raise not_found()
        for m in list(self.db.messages.values()):
            if m.userId == owner and id in m.labelIds:
                self.relabel(m, remove=(id,))

    # -- drafts ---------------------------------------------------------------------------------
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

    @api("gmail.users.getProfile", f"GET {P}/profile", "The mailbox address and counts.")
    def get_profile(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        msgs = [m for m in self.db.messages.values() if m.userId == owner]
        return {"emailAddress": owner, "messagesTotal": len(msgs), "threadsTotal": len({m.threadId for m in msgs}),
                "historyId": str(self.db.history)}

    # -- seeding helpers (not tools) -------------------------------------------------------------
    def add_message(self, *, sender: str, subject: str, body: str, to: list[str] | None = None,
                    cc: list[str] | None = None, owner: str | None = None, labels: list[str] | None = None,
                    unread: bool = True, date: Any = None, thread_id: str | None = None,
                    attachments: list[dict[str, Any]] | None = None, in_reply_to: str | None = None) -> Message:
        """Plant a received (or, with labels=["SENT"], sent) message; returns the stored row.

        date: datetime or epoch ms (default: now). attachments: [{"filename", "mimeType", "content": str|bytes}].
        """
        owner = owner or self.ws.me.email
        labels = list(labels) if labels is not None else ["INBOX"]
        if unread and "UNREAD" not in labels and "SENT" not in labels:
            labels.append("UNREAD")
        for l in labels:
            if l not in SYSTEM_LABELS and f"{owner}/{l}" not in self.db.labels:
                raise ValueError(f"unknown label id {l!r}; create it with add_label first")
        ms = self.ws.now_ms() if date is None else (int(date.timestamp() * 1000) if hasattr(date, "timestamp") else int(date))
        atts = []
        for a in attachments or []:
            raw = a["content"].encode() if isinstance(a["content"], str) else a["content"]
            atts.append({"filename": a["filename"], "mimeType": a.get("mimeType", "application/octet-stream"),
                         "data": b64url(raw), "size": len(raw)})
        return self.store(owner, sender=sender, to=to or [owner], cc=cc or [], subject=subject, body=body,
                          labels=labels, internal_date=ms, thread_id=thread_id, in_reply_to=in_reply_to,
                          attachments=atts)

    def add_label(self, name: str, owner: str | None = None) -> Label:
        owner = owner or self.ws.me.email
        name = self._check_label_name(owner, name, None)
        self.db.seq += 1
        l = Label(id=f"Label_{self.db.seq}", userId=owner, name=name)
        self.db.labels[f"{owner}/{l.id}"] = l
        return l

    def mailbox(self, owner: str | None = None) -> list[Message]:
        """All messages of a mailbox, newest first (for verifiers)."""
        owner = owner or self.ws.me.email
        return newest_first(m for m in self.db.messages.values() if m.userId == owner)

