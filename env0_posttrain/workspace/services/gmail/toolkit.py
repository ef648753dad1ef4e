"""The Gmail service: one mixin per users.* resource (messages, threads, labels, drafts, history, settings, the
mailbox itself) over the mailbox mechanics, plus the seeding helpers task setups call."""

from __future__ import annotations

from typing import Any

from .data_model import SYSTEM_LABELS, Label, Message
from .drafts import Drafts
from .history import History
from .labels import Labels
from .mailbox import newest_first
from .mime import b64url
from .settings import MailSettings
from .threads import Threads
from .users import Users


class Gmail(Drafts, Threads, Labels, History, Users, MailSettings):
    """Seeding helpers (not tools) on top of every resource."""

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

    def label_ids_for(self, names: list[str], owner: str | None = None) -> list[str]:
        """Label ids for labels named as a seeder names them: a system label is its own id, a user label is found by
        its name in any case or made (so a needle can carry a label the mailbox does not have yet)."""
        owner = owner or self.ws.me.email
        out = []
        for n in names:
            if n in SYSTEM_LABELS:
                out.append(n)
            else:
                known = self.label_ids_by_name(owner).get(n.lower())  # its keys are lower case, as Gmail's names are
                out.append(known or self.add_label(n, owner).id)
        return out

    def mailbox(self, owner: str | None = None) -> list[Message]:
        """All messages of a mailbox, newest first (for verifiers)."""
        owner = owner or self.ws.me.email
        return newest_first(m for m in self.db.messages.values() if m.userId == owner)
