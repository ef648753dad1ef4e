"""Gmail v1 beyond the basics: thread writes (modify/trash/untrash/delete), drafts.update, labels.update,
messages.insert/import, users.history.list and push notifications (watch/stop).

A mixin of `Gmail`: it uses the mailbox mechanics (relabel, store, drop, the history log) and the
toolkit's compose/render helpers. Import files mail as received (the mailbox's filters apply); insert
stores it as is, as Gmail does.
"""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from typing import Any

from ...base import api
from ...errors import bad_request, not_found
from ...paging import check_size, page
from .data_model import SYSTEM_LABELS, Draft, Message, Watch
from .mime import unb64url

P = "gmail/v1/users/{userId}"
HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")
_HISTORY_KEY = {"messageAdded": "messagesAdded", "messageDeleted": "messagesDeleted", "labelAdded": "labelsAdded",
                "labelRemoved": "labelsRemoved"}
_LABEL_LISTS = {"body": "{addLabelIds: [..], removeLabelIds: [..]}"}


def _label_lists(body: dict) -> tuple[list, list]:
    add, remove = body.get("addLabelIds") or [], body.get("removeLabelIds") or []
    if not isinstance(add, list) or not isinstance(remove, list):
        raise bad_request("Invalid JSON payload received. addLabelIds must be a list", "invalidArgument")
    return add, remove


class MailMore:
    db: Any
    ws: Any

    # -- threads ----------------------------------------------------------------------------------
    def _thread_json(self, owner: str, tid: str) -> dict[str, Any]:
        msgs = self._thread(owner, tid)  # type: ignore[attr-defined]
        return {"id": tid, "historyId": str(max(m.historyId for m in msgs)),
                "messages": [{"id": m.id, "threadId": m.threadId, "labelIds": list(m.labelIds)} for m in msgs]}

    @api("gmail.users.threads.modify", f"POST {P}/threads/{{id}}/modify",
         "Add/remove labels on every message of a thread.", writes=True, params={"id": "thread id", **_LABEL_LISTS})
    def threads_modify(self, id: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        add, remove = _label_lists(body)
        if not add and not remove:
            raise bad_request("No label add or removes specified", "invalidArgument")
        self.check_labels(owner, add + remove)  # type: ignore[attr-defined]
        for m in self._thread(owner, id):  # type: ignore[attr-defined]
            self.relabel(m, add, remove)  # type: ignore[attr-defined]
        return self._thread_json(owner, id)

    @api("gmail.users.threads.trash", f"POST {P}/threads/{{id}}/trash", "Move a whole thread to trash.", writes=True,
         params={"id": "thread id"})
    def threads_trash(self, id: str, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        for m in self._thread(owner, id):  # type: ignore[attr-defined]
            self.relabel(m, add=("TRASH",), remove=("INBOX",))  # type: ignore[attr-defined]
        return self._thread_json(owner, id)

    @api("gmail.users.threads.untrash", f"POST {P}/threads/{{id}}/untrash", "Restore a whole thread from trash.",
         writes=True, params={"id": "thread id"})
    def threads_untrash(self, id: str, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        for m in self._thread(owner, id):  # type: ignore[attr-defined]
            self.messages_untrash(m.id, userId)  # type: ignore[attr-defined]
        return self._thread_json(owner, id)

    @api("gmail.users.threads.delete", f"DELETE {P}/threads/{{id}}", "Permanently delete a whole thread.",
         writes=True, status=204, params={"id": "thread id"})
    def threads_delete(self, id: str, userId: str = "me") -> None:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        for m in self._thread(owner, id):  # type: ignore[attr-defined]
            self.drop(m)  # type: ignore[attr-defined]

    # -- drafts.update, labels.update ---------------------------------------------------------------
    @api("gmail.users.drafts.update", f"PUT {P}/drafts/{{id}}",
         "Replace a draft's content (to/subject/body_text or body.message.raw).", writes=True,
         params={"id": "draft id", "to": "", "cc": "", "subject": "", "body_text": "", "threadId": "",
                 "body": "{message: {raw, threadId}}"}, upload=f"/upload/{P}/drafts/{{id}}")
    def drafts_update(self, id: str, userId: str = "me", body: dict | None = None, to: str | None = None,
                      cc: str | None = None, bcc: str | None = None, subject: str | None = None,
                      body_text: str | None = None, threadId: str | None = None) -> dict[str, Any]:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        d = self._draft(owner, id)  # type: ignore[attr-defined]
        body = body or {}
        inner = body.get("message", body if "raw" in body else {})  # an upload's metadata is the message itself
        if not isinstance(inner, dict):
            raise bad_request("Invalid JSON payload received.", "invalidArgument")
        if "id" in body and body["id"] != d.id:
            raise bad_request("Draft id in the body does not match the path.", "invalidArgument")
        old = self.db.messages[d.messageId]
        thread = threadId or inner.get("threadId") or None
        m = self._compose(owner, inner, to, cc, bcc, subject, body_text, thread, labels=("DRAFT",))  # type: ignore[attr-defined]
        self.drop(old)  # the draft's message is replaced by a new one (a new message id), as in Gmail
        self.db.drafts[d.id] = Draft(id=d.id, userId=owner, messageId=m.id)
        return self._draft_json(self.db.drafts[d.id])  # type: ignore[attr-defined]

    @api("gmail.users.labels.update", f"PUT {P}/labels/{{id}}",
         "Replace a label (name is required; fields left out are reset).", writes=True,
         params={"id": "", "body": "{name, messageListVisibility, labelListVisibility, color}"})
    def labels_update(self, id: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        if id in SYSTEM_LABELS:
            raise bad_request(f"Invalid label: {id}", "invalidArgument")
        if f"{owner}/{id}" not in self.db.labels:
            raise not_found()
        if "name" not in body:
            raise bad_request("Invalid label name", "invalidArgument")
        full = {"name": body["name"], "messageListVisibility": body.get("messageListVisibility", "show"),
                "labelListVisibility": body.get("labelListVisibility", "labelShow"), "color": body.get("color")}
        for k in ("messageListVisibility", "labelListVisibility"):
            if not isinstance(full[k], str):
                raise bad_request(f"Invalid value for {k}", "invalidArgument")
        if full["color"] is not None and not isinstance(full["color"], dict):
            raise bad_request("Invalid value for color", "invalidArgument")
        return self.labels_patch(id, full, userId)  # type: ignore[attr-defined]

    # -- insert / import ----------------------------------------------------------------------------
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
        self.check_labels(owner, labels)  # type: ignore[attr-defined]
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
        tid = self.thread_for(owner, f["inReplyTo"], tid if isinstance(tid, str) and tid else None)  # type: ignore[attr-defined]
        m = self.store(owner, sender=str(f.get("from") or owner), to=f["to"], cc=f["cc"], bcc=f["bcc"],  # type: ignore[attr-defined]
                       subject=f["subject"], body=f["body"], labels=tuple(labels), internal_date=when, thread_id=tid,
                       in_reply_to=f["inReplyTo"], references=f["references"], attachments=f["attachments"],
                       message_id_header=str(headers["Message-ID"]).strip() if headers.get("Message-ID") else None)
        if received:
            m = self.filtered(owner, m)  # type: ignore[attr-defined]
        if deleted:
            self.drop(m)  # type: ignore[attr-defined]
        return m

    @api("gmail.users.messages.insert", f"POST {P}/messages",
         "Put a message straight into the mailbox (no sending, no filters), like IMAP APPEND.", writes=True,
         params={"body": "{raw: base64url RFC 822, labelIds: [..], threadId}", "internalDateSource": "receivedTime|dateHeader"},
         upload=f"/upload/{P}/messages")
    def messages_insert(self, body: dict, userId: str = "me", internalDateSource: str = "receivedTime",
                        deleted: bool = False) -> dict[str, Any]:
        m = self._put_raw(self.owner(userId), body, internalDateSource, deleted, received=False)  # type: ignore[attr-defined]
        return {"id": m.id, "threadId": m.threadId, "labelIds": list(self.db.messages.get(m.id, m).labelIds)}

    @api("gmail.users.messages.import", f"POST {P}/messages/import",
         "Import a message as if received by mail (the mailbox's filters apply).", writes=True,
         params={"body": "{raw: base64url RFC 822, labelIds: [..], threadId}", "internalDateSource": "dateHeader|receivedTime"},
         upload=f"/upload/{P}/messages/import")
    def messages_import(self, body: dict, userId: str = "me", internalDateSource: str = "dateHeader",
                        neverMarkSpam: bool = False, processForCalendar: bool = False,
                        deleted: bool = False) -> dict[str, Any]:
        m = self._put_raw(self.owner(userId), body, internalDateSource, deleted, received=True)  # type: ignore[attr-defined]
        return {"id": m.id, "threadId": m.threadId, "labelIds": list(self.db.messages.get(m.id, m).labelIds)}

    # -- history ------------------------------------------------------------------------------------
    @api("gmail.users.history.list", f"GET {P}/history",
         "Changes to the mailbox since a historyId (from getProfile, a message or a thread).",
         params={"startHistoryId": "required", "historyTypes": "messageAdded|messageDeleted|labelAdded|labelRemoved",
                 "labelId": "", "maxResults": "", "pageToken": ""})
    def history_list(self, startHistoryId: str, userId: str = "me", historyTypes: list[str] | None = None,
                     labelId: str | None = None, maxResults: int | None = None,
                     pageToken: str | None = None) -> dict[str, Any]:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        try:
            start = int(startHistoryId)
        except ValueError:
            raise bad_request(f"Invalid value for startHistoryId: {startHistoryId}", "invalidArgument") from None
        if start < self.db.historyFloor:  # older than the retained history: the client must do a full sync
            raise not_found("Requested entity was not found.")
        for t in historyTypes or []:
            if t not in HISTORY_TYPES:
                raise bad_request(f"Invalid value at 'history_types' ({t})", "invalidArgument")
        size = check_size(maxResults, 100, 500, "maxResults")
        groups: dict[int, dict[str, Any]] = {}
        for key in self._history_keys(start):
            r = self.db.historyLog[key]
            if r.userId != owner or (historyTypes and r.kind not in historyTypes):
                continue
            cur = self.db.messages.get(r.messageId)
            labels = list(cur.labelIds) if cur is not None else list(r.labelIds)
            if labelId and labelId not in labels and labelId not in r.labelIds:
                continue
            msg = {"id": r.messageId, "threadId": r.threadId}
            g = groups.setdefault(r.id, {"id": str(r.id), "messages": []})
            g["messages"].append(msg)
            entry = {"message": {**msg, "labelIds": labels}}
            if r.kind in ("labelAdded", "labelRemoved"):
                entry["labelIds"] = list(r.labelIds)
            g.setdefault(_HISTORY_KEY[r.kind], []).append(entry)
        chunk, nxt = page(list(groups.values()), pageToken, size)
        out: dict[str, Any] = {"history": chunk} if chunk else {}
        if nxt:
            out["nextPageToken"] = nxt
        out["historyId"] = str(self.db.history)
        return out

    def _history_keys(self, start: int) -> list[str]:
        """Log keys after `start`, in order (the sorted key list is memoised until the log changes)."""
        import bisect

        keys = self.db.cached("history_keys", self.db.historyLog.version, lambda: sorted(self.db.historyLog))
        return keys[bisect.bisect_right(keys, f"{start:012d}/~"):]

    # -- push notifications -------------------------------------------------------------------------
    @api("gmail.users.watch", f"POST {P}/watch",
         "Register push notifications to a Pub/Sub topic (nothing is pushed here).", writes=True,
         params={"body": "{topicName: projects/<p>/topics/<t>, labelIds: [..]}"})
    def watch(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)  # type: ignore[attr-defined]
        topic = body.get("topicName")
        if not isinstance(topic, str) or not topic.startswith("projects/") or "/topics/" not in topic:
            raise bad_request("Invalid topicName does not match projects/*/topics/*", "invalidArgument")
        labels = body.get("labelIds") or []
        if not isinstance(labels, list):
            raise bad_request("Invalid JSON payload received. labelIds must be a list", "invalidArgument")
        self.check_labels(owner, labels)  # type: ignore[attr-defined]
        exp = str(self.ws.now_ms() + 7 * 24 * 3600 * 1000)
        self.db.watches[owner] = Watch(userId=owner, topicName=topic, labelIds=tuple(labels), expiration=exp)
        return {"historyId": str(self.db.history), "expiration": exp}

    @api("gmail.users.stop", f"POST {P}/stop", "Stop push notifications for the mailbox.", writes=True, status=204)
    def stop(self, userId: str = "me") -> None:
        self.db.watches.pop(self.owner(userId), None)  # type: ignore[attr-defined]
