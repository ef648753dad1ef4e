"""Mail helpers shared by the mail and multi-app templates: planting, finding and reading messages."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.common import hours_ago, pick_people, person_params
from env0_posttrain.tasks.gates import _address
from env0_posttrain.tasks.pools import BODIES, SUBJECTS


def plant_mail(ws: Any, sender_email: str, subject: str, hours: float = 2.0, unread: bool = True,
               labels: list[str] | None = None) -> Any:
    p = ws.person(sender_email)
    header = f"{p.name} <{p.email}>" if p else sender_email
    return ws.gmail.add_message(sender=header, subject=subject, body=BODIES.get(subject, subject),
                                date=hours_ago(ws, hours), unread=unread, labels=labels)


def mine(ws: Any) -> list[Any]:
    return ws.gmail.mailbox(ws.me.email)


def find_mail(ws: Any, sender_email: str, subject: str) -> Any:
    for m in mine(ws):
        if _address(m.sender) == sender_email and m.subject == subject:
            return m
    raise LookupError(f"no message from {sender_email} with subject {subject!r}")


def from_person(ws: Any, sender_email: str) -> list[Any]:
    """Messages from a person in my mailbox, not trashed (what 'every email from X' means)."""
    return [m for m in mine(ws) if _address(m.sender) == sender_email and "TRASH" not in m.labelIds]


def label_id(ws: Any, name: str) -> str | None:
    for l in ws.gmail.user_labels(ws.me.email):
        if l.name.lower() == name.lower():
            return l.id
    return None


def new_sent(start: Any, end: Any) -> list[Any]:
    """Messages I sent between start and end."""
    before = start.gmail.db.messages
    me = start.me.email
    return [m for mid, m in end.gmail.db.messages.items()
            if mid not in before and m.userId == me and "SENT" in m.labelIds]


def new_drafts(start: Any, end: Any) -> list[Any]:
    before = start.gmail.db.drafts
    return [end.gmail.db.messages[d.messageId] for did, d in end.gmail.db.drafts.items() if did not in before]


def recipients_of(m: Any) -> set[str]:
    return {_address(a) for a in m.to + m.cc + m.bcc}


def labels_changed_elsewhere(start: Any, end: Any, keep: set[str]) -> list[str]:
    """Ids of my messages (other than ``keep``) whose labels changed: collateral edits."""
    s, e = start.gmail.db.messages, end.gmail.db.messages
    me = start.me.email
    return [mid for mid, m in s.items() if m.userId == me and mid not in keep and mid in e and e[mid].labelIds != m.labelIds]


def sample_mail(rng: random.Random, ws: Any) -> dict[str, Any]:
    """A sender and a subject for one planted message."""
    (p,) = pick_people(rng, ws)
    return {**person_params(p), "subject": rng.choice(SUBJECTS)}


def query_for(email: str, subject: str) -> str:
    return f'from:{email} subject:"{subject}"'


def text_mentions(text: str, needle: str) -> bool:
    return " ".join(needle.lower().split()) in " ".join((text or "").lower().split())
