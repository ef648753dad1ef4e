"""Plant an env0 package's mail needles: NEEDLES / NEEDLE_THREADS (or `parameterize(rng)`), under env0's default
mail when there is a checkout (it fills every inbox from its content library) and our seeded company's otherwise."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from types import ModuleType
from typing import TYPE_CHECKING

from ..env0_planting import Planting

if TYPE_CHECKING:
    from ...environment import Workspace


def plant(ws: Workspace, mod: ModuleType, p: Planting) -> None:
    if p.env0_root is not None:
        p.fills.clear_my_mail(ws)
    p.manifest[:] = _gmail(ws, mod, p.rng)
    if p.env0_root is not None:
        fixed = len(p.manifest) + sum(len(t.get("messages", [])) for t in getattr(mod, "NEEDLE_THREADS", None) or [])
        p.fills.gmail_default(ws, p.env0_root, getattr(mod, "GMAIL_FILL_CONFIG", None) or {}, fixed, p.seed)


def _gmail_needles(mod: ModuleType, rng: random.Random) -> list[dict]:
    fn = getattr(mod, "parameterize", None)
    if callable(fn):
        out = fn(rng)
        if isinstance(out, tuple):
            out = out[0]
        if out and isinstance(out[0], dict) and "subject" in out[0]:
            return list(out)
    return [n for n in getattr(mod, "NEEDLES", None) or [] if isinstance(n, dict) and "subject" in n]


def _drop_fill_labels(ws: Workspace) -> None:
    """env0's gmail fill has system labels only; verifiers find "the label the agent made" by name, so our fill's
    user labels (e.g. a "Vendors" label) would be taken for the agent's. They go, and off their messages too."""
    gone = {l.id for l in ws.gmail.db.labels.values() if l.userId == ws.me.email}
    for key in [k for k, l in ws.gmail.db.labels.items() if l.id in gone and l.userId == ws.me.email]:
        del ws.gmail.db.labels[key]
    for mid, m in list(ws.gmail.db.messages.items()):
        if m.userId == ws.me.email and gone & set(m.labelIds):
            ws.gmail.db.messages[mid] = m.model_copy(update={"labelIds": tuple(x for x in m.labelIds if x not in gone)})


def _gmail(ws: Workspace, mod: ModuleType, rng: random.Random) -> list[dict]:
    me, now = ws.me.email, ws.now
    _drop_fill_labels(ws)
    entries = []
    for n in _gmail_needles(mod, rng):
        when = (datetime.fromisoformat(n["received_at"]) if "received_at" in n else
                now - timedelta(days=n.get("days_ago", rng.randint(1, 30)), hours=rng.randint(6, 18)))
        labels = ws.gmail.label_ids_for(list(n.get("labels", ["INBOX"])))
        to = n.get("to") or me
        m = ws.gmail.add_message(sender=f"{n['sender_name']} <{n['sender_email']}>", subject=n["subject"],
                                 body=n["body_plain"], to=[to] if isinstance(to, str) else list(to), labels=labels,
                                 unread=not n.get("is_read", False), date=when)
        if n.get("is_starred"):
            ws.gmail.db.messages[m.id] = m.model_copy(update={"labelIds": m.labelIds + ("STARRED",)})
        entries.append({"message_id": m.id, "thread_id": m.threadId, "role": n.get("role", "needle"),
                        "subject": n["subject"], "sender_email": n["sender_email"], "params": n.get("params", {})})
    for t in getattr(mod, "NEEDLE_THREADS", None) or []:
        lo, hi = t.get("age_range", (0, 30))
        base = now - timedelta(days=rng.randint(lo, hi))
        labels = ws.gmail.label_ids_for(list(t.get("labels", ["INBOX"])))
        thread_id, prev = None, None
        for i, msg in enumerate(t.get("messages", [])):
            when = min(base + timedelta(minutes=msg.get("minutes_offset", i * rng.randint(30, 480))), now)
            sent = msg.get("is_sent", False) or msg["sender_email"] == me
            read = rng.random() < msg.get("is_read_probability", 0.8 if i < len(t["messages"]) - 1 else 0.5)
            sender = f"{ws.me.name} <{me}>" if sent else f"{msg['sender_name']} <{msg['sender_email']}>"
            to = msg.get("to_email", msg["sender_email"]) if sent else me
            m = ws.gmail.add_message(sender=sender, subject=t["subject"], body=msg["body_plain"], to=[to],
                                     labels=["SENT"] if sent else list(labels), unread=not read, date=when,
                                     thread_id=thread_id, in_reply_to=prev)
            thread_id, prev = m.threadId, m.messageIdHeader
    return entries
