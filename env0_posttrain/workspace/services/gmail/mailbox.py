"""Mailbox mechanics shared by handlers and seeding: rendering, labels, storing and delivering messages."""

from __future__ import annotations

from typing import Any, Iterable

from ...base import Service
from ...errors import bad_request, google_error, not_found
from .data_model import SYSTEM_LABELS, Attachment, GmailDB, HistoryRecord, Label, Message
from .mime import address_of, b64url, headers_of, payload, size_estimate, snippet, to_raw
from .query import Query

P = "gmail/v1/users/{userId}"  # the path prefix of every users.* method
HISTORY_KEPT = 1000  # history records kept (every write's savepoint copies the log, so it must not grow forever)


class Mailbox(Service):
    name = "gmail"
    DB = GmailDB
    db: GmailDB

    def bootstrap(self) -> None:
        pass

    # -- identity -------------------------------------------------------------------------------
    def owner(self, userId: str) -> str:
        me = self.ws.me.email
        if userId in ("me", me) or userId.lower() == me:
            return me
        if userId.lower() in self.other_mailboxes():
            return userId.lower()
        raise google_error(403, f"Delegation denied for {me}", "forbidden")

    def other_mailboxes(self) -> dict[str, str]:
        """email -> display name of the other accounts this workspace holds mail for (auth's extra mailboxes, e.g.
        env0's personal account), reached by their email as userId."""
        auth = self.ws.auth.db
        return {u.email.lower(): u.display_name for uid in auth.extra_mailboxes if (u := auth.users.get(uid))}

    def _msg(self, owner: str, mid: str) -> Message:
        m = self.db.messages.get(mid)
        if m is None or m.userId != owner:
            raise not_found()
        return m

    # -- labels -------------------------------------------------------------------------------
    def user_labels(self, owner: str) -> list[Label]:
        return [l for k, l in self.db.labels.items() if l.userId == owner]

    def label_ids_by_name(self, owner: str) -> dict[str, str]:
        out = {n.lower(): n for n in SYSTEM_LABELS}
        out.update({l.name.lower(): l.id for l in self.user_labels(owner)})
        return out

    def valid_label(self, owner: str, lid: str) -> bool:
        return lid in SYSTEM_LABELS or f"{owner}/{lid}" in self.db.labels

    def check_labels(self, owner: str, ids: Iterable[str]) -> None:
        for lid in ids:
            if not isinstance(lid, str) or not self.valid_label(owner, lid):
                raise bad_request(f"Invalid label: {lid}", "invalidArgument")

    # -- rendering ------------------------------------------------------------------------------
    def render(self, m: Message, fmt: str = "full", metadata_headers: list[str] | None = None) -> dict[str, Any]:
        base: dict[str, Any] = {"id": m.id, "threadId": m.threadId, "labelIds": list(m.labelIds),
                                "snippet": snippet(m.body), "sizeEstimate": size_estimate(m),
                                "historyId": str(m.historyId), "internalDate": str(m.internalDate)}
        if fmt == "minimal":
            return base
        if fmt == "raw":
            base["raw"] = b64url(to_raw(m))
            return base
        headers = headers_of(m)
        if fmt == "metadata":
            if metadata_headers:
                want = {h.lower() for h in metadata_headers}
                headers = [h for h in headers if h["name"].lower() in want]
            base["payload"] = {"partId": "", "mimeType": "multipart/mixed" if m.attachments else "text/plain",
                               "filename": "", "headers": headers, "body": {"size": 0}}
            return base
        if fmt != "full":
            raise bad_request(f"Invalid value at 'format' ({fmt})", "invalidArgument", "format")
        base["payload"] = payload(m, headers)
        return base

    # -- search ---------------------------------------------------------------------------------
    def search(self, owner: str, q: str | None, label_ids: list[str] | None, include_spam_trash: bool) -> list[Message]:
        query = Query(q or "", self.ws.now, self.label_ids_by_name(owner)) if q else None
        hide = not (include_spam_trash or (query is not None and query.includes_trash_spam) or
                    any(l in ("TRASH", "SPAM") for l in (label_ids or [])))
        pool = self.sorted_mailbox(owner, hide)
        if not label_ids and query is None:
            return pool
        match = query.matches if query is not None else None
        return [m for m in pool if (not label_ids or all(l in m.labelIds for l in label_ids))
                and (match is None or match(m))]

    def sorted_mailbox(self, owner: str, hide_spam_trash: bool) -> list[Message]:
        """A mailbox newest first, memoised until the next change (every write bumps db.history)."""
        def build() -> list[Message]:
            msgs = [m for m in self.db.messages.values() if m.userId == owner and not (
                hide_spam_trash and ("TRASH" in m.labelIds or "SPAM" in m.labelIds))]
            return newest_first(msgs)
        return self.db.cached(("mailbox", owner, hide_spam_trash), self.db.messages.version, build)

    # -- writes ---------------------------------------------------------------------------------
    def next_history(self) -> int:
        self.db.history += 1
        return self.db.history

    def put(self, m: Message) -> Message:
        self.db.messages[m.id] = m
        self.db.history += 1
        return m

    def relabel(self, m: Message, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Message:
        labels = [l for l in m.labelIds if l not in set(remove)]
        for l in add:
            if l not in labels:
                labels.append(l)
        if tuple(labels) == m.labelIds:
            return m
        new = self.put(m.model_copy(update={"labelIds": tuple(labels), "historyId": self.next_history()}))
        added = tuple(l for l in labels if l not in m.labelIds)
        removed = tuple(l for l in m.labelIds if l not in labels)
        if added:
            self.log_history("labelAdded", new, added)
        if removed:
            self.log_history("labelRemoved", new, removed)
        return new

    def log_history(self, kind: str, m: Message, labels: tuple[str, ...] = ()) -> None:
        """Record a change for users.history.list (keyed so that key order is history order)."""
        hid = self.db.history if kind == "messageDeleted" else m.historyId  # a message's historyId is its last change
        self.db.historyLog[f"{hid:012d}/{kind}"] = HistoryRecord(id=hid, userId=m.userId, kind=kind, messageId=m.id,
                                                                 threadId=m.threadId, labelIds=labels)
        if len(self.db.historyLog) > HISTORY_KEPT:  # Gmail keeps a limited history; older ids then need a full sync
            oldest = self.db.historyLog.pop(next(iter(self.db.historyLog)))
            self.db.historyFloor = max(self.db.historyFloor, oldest.id)

    def drop(self, m: Message) -> None:
        """Delete a message for good (its drafts go with it)."""
        del self.db.messages[m.id]
        self.next_history()
        self.log_history("messageDeleted", m)
        for k, d in list(self.db.drafts.items()):
            if d.messageId == m.id:
                del self.db.drafts[k]

    def thread_for(self, owner: str, in_reply_to: str | None, thread_id: str | None) -> str | None:
        if thread_id:
            if not any(m.threadId == thread_id and m.userId == owner for m in self.db.messages.values()):
                raise not_found()
            return thread_id
        if in_reply_to:
            for m in self.db.messages.values():
                if m.userId == owner and m.messageIdHeader == in_reply_to.strip():
                    return m.threadId
        return None

    def store(self, owner: str, *, sender: str, to: Iterable[str] = (), cc: Iterable[str] = (), bcc: Iterable[str] = (),
              subject: str = "", body: str = "", labels: Iterable[str] = ("INBOX", "UNREAD"),
              internal_date: int | None = None, thread_id: str | None = None, in_reply_to: str | None = None,
              references: str | None = None, attachments: Iterable[dict[str, Any]] = (),
              message_id_header: str | None = None) -> Message:
        mid = self.new_id("message")
        atts = tuple(Attachment(attachmentId="ANGjdJ" + self.new_id("attachment", length=24), filename=a["filename"],
                                mimeType=a.get("mimeType", "application/octet-stream"), data=a["data"],
                                size=int(a.get("size", 0))) for a in attachments)
        domain = address_of(sender).split("@")[-1] or "mail.gmail.com"
        m = Message(
            id=mid, threadId=thread_id or self.thread_for(owner, in_reply_to, None) or mid, userId=owner,
            labelIds=tuple(labels), historyId=self.next_history(),
            internalDate=internal_date if internal_date is not None else self.ws.now_ms(), sender=sender,
            to=tuple(to), cc=tuple(cc), bcc=tuple(bcc), subject=subject, body=body,
            messageIdHeader=message_id_header or f"<{mid}.{self.db.seq}@{domain}>", inReplyTo=in_reply_to,
            references=references or in_reply_to, attachments=atts,
        )
        m = self.put(m)
        self.log_history("messageAdded", m, m.labelIds)
        return m

    def from_header(self, owner: str | None = None) -> str:
        me = self.ws.me
        if owner and owner != me.email:
            return f"{self.other_mailboxes().get(owner, owner)} <{owner}>"
        return f"{me.name} <{me.email}>"

    def expand(self, addrs: list[str], depth: int = 0) -> list[str]:
        """Group addresses (Admin directory groups) expand to their members' addresses, as mail does."""
        admin = self.ws.admin.db
        out = []
        for addr in addrs:
            group = next((g for g in admin.groups.values() if g.email == addr), None) if depth < 3 else None
            if group is None:
                out.append(addr)
                continue
            members = [m for m in admin.members.values() if m.groupId == group.id]
            users = [admin.users[m.id].primaryEmail for m in members if m.type == "USER" and m.id in admin.users]
            subgroups = [m.email for m in members if m.type == "GROUP"]
            out += users + self.expand(subgroups, depth + 1)
        return out

    def deliver(self, sent: Message) -> None:
        """Copy a sent message into each internal recipient's inbox; bounce unknown internal addresses."""
        seen = set()
        for addr in self.expand([address_of(r) for r in sent.to + sent.cc + sent.bcc]):
            if addr in seen:
                continue
            seen.add(addr)
            person = self.ws.person(addr)
            if addr == sent.userId:
                self.relabel(self.db.messages[sent.id], add=("INBOX", "UNREAD"))
            elif person is not None:
                self.filtered(person.email, self.store(person.email, sender=sent.sender, to=sent.to, cc=sent.cc, subject=sent.subject,  # type: ignore[attr-defined]
                           body=sent.body, in_reply_to=sent.inReplyTo, references=sent.references,
                           attachments=[a.model_dump() for a in sent.attachments],
                           message_id_header=sent.messageIdHeader))
            elif addr.endswith("@" + self.ws.domain):
                self.store(sent.userId, sender="Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
                           to=(sent.userId,), subject="Delivery Status Notification (Failure)",
                           body=f"Address not found\n\nYour message wasn't delivered to {addr} because the address "
                                f"couldn't be found, or is unable to receive mail.",
                           in_reply_to=sent.messageIdHeader, thread_id=sent.threadId)


def oldest_first(msgs: Iterable[Message]) -> list[Message]:
    """By internalDate; messages sharing one (the frozen clock gives every new message the same) in the order they
    were stored. `msgs` must come in table order: the messages table keeps insertion order (a replaced row keeps
    its place; snapshots, forks and rollbacks copy the order)."""
    return sorted(msgs, key=_date)  # stable


def newest_first(msgs: Iterable[Message]) -> list[Message]:
    """oldest_first reversed: the latest stored first among equal timestamps, as in a mailbox listing."""
    out = oldest_first(msgs)
    out.reverse()
    return out


def _date(m: Message) -> int:
    return m.internalDate
