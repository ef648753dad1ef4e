"""env0's default Gmail fill, read at run time from the user's env0 checkout (never copied).

env0's mock-gmail seeds every package's inbox to `GMAIL_FILL_CONFIG["target_count"]` messages (3000 unless set)
around the needles: the ambiguous edge cases (`include_ambiguous`, default on), then work threads and work
singles, notifications (`old_notification_ratio` of them forced 15-60 days old, placeholders filled),
newsletters, personal, sent and spam mail in the configured `distribution`. The templates are the checkout's
`mock_gmail/seed/content_library/*.py` (plain data modules); the placeholder values are the literal lists in
`long_context.py`, read with `ast` (that module imports env0's database layer, so it is not imported).
Our own fill of the acting user's mailbox goes first; with no checkout it stays (see seed/needles.py).
"""

from __future__ import annotations

import ast
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

from ....workspace.environment import Workspace
from ..package.load import Env0Error, load_needles

SEED = Path("packages/environments/mock-gmail/mock_gmail/seed")
POOLS = {"ambiguous": "AMBIGUOUS_EMAILS", "newsletters": "NEWSLETTERS", "notifications": "NOTIFICATIONS",
         "personal": "PERSONAL_EMAILS", "sent": "SENT_EMAILS", "spam": "SPAM_EMAILS", "work": "WORK_THREADS"}
DISTRIBUTION = {"notifications": 0.35, "newsletters": 0.20, "work": 0.20, "personal": 0.10, "sent": 0.05, "spam": 0.05}
_PARAM_LISTS = {"attendee_name": "_PERSON_NAMES", "event_name": "_EVENT_NAMES", "company": "_COMPANIES"}


def clear_my_mail(ws: Workspace) -> None:
    """Our seeded company's mail of the acting user goes: env0's fill takes its place."""
    me = ws.me.email
    for key in [k for k, m in ws.gmail.db.messages.items() if m.userId == me]:
        del ws.gmail.db.messages[key]
    for key in [k for k, d in ws.gmail.db.drafts.items() if d.userId == me]:
        del ws.gmail.db.drafts[key]


def _library(root: Path) -> tuple[dict[str, list[dict]], dict[str, list[str]]]:
    base = Path(root) / SEED
    pools: dict[str, list[dict]] = {}
    for name, attr in POOLS.items():
        path = base / "content_library" / f"{name}.py"
        if not path.is_file():
            raise Env0Error("seed gmail default", path, "missing: --env0-root must be an env0 checkout (its mock-gmail "
                            "default fill lives here)")
        mod = load_needles(path)
        pools[name] = list(getattr(mod, attr))
        if name == "work":
            pools["work_singles"] = list(getattr(mod, "WORK_SINGLES", []))
    params: dict[str, list[str]] = {}
    lc = base / "long_context.py"
    if lc.is_file():
        for node in ast.parse(lc.read_text()).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
                (node.target if isinstance(node, ast.AnnAssign) else None)
            if isinstance(target, ast.Name) and target.id in _PARAM_LISTS.values() and node.value is not None:
                params[target.id] = list(ast.literal_eval(node.value))
    return pools, params


def _fill_placeholders(t: dict, params: dict[str, list[str]], rng: random.Random) -> dict:
    values = {k: rng.choice(params[v]) for k, v in _PARAM_LISTS.items() if params.get(v)}
    values["total_guests"] = str(rng.randint(15, 80))
    out = dict(t)
    for field in ("subject", "body_plain"):
        val = out.get(field, "")
        if "{" in val:
            for k, v in values.items():
                val = val.replace("{{" + k + "}}", v).replace("{" + k + "}", v)
            out[field] = val
    return out


def _single(ws: Workspace, t: dict, rng: random.Random, *, days: int | None = None, spam: bool = False,
            sent: bool = False) -> None:
    lo, hi = t.get("age_range", (0, 30))
    when = ws.now - timedelta(days=days if days is not None else rng.randint(lo, hi), hours=rng.randint(0, 23))
    read = rng.random() < t.get("is_read_probability", 0.5)
    category = t.get("category", "")
    sent = sent or t.get("is_sent", False) or category == "SENT"
    spam = spam or category == "SPAM"
    me = ws.me
    if sent:
        to_email = t.get("to_email", t.get("sender_email", ""))
        to_name = t.get("to_name", t.get("sender_name", ""))
        sender, to, read = f"{me.name} <{me.email}>", f"{to_name} <{to_email}>" if to_name and to_email else to_email, True
    else:
        sender = f"{t.get('sender_name', 'Unknown')} <{t.get('sender_email', 'unknown@example.com')}>"
        to = me.email
    labels = ["SENT"] if sent else ["SPAM"] if spam else ["INBOX", category] if category.startswith("CATEGORY_") \
        else ["INBOX"]
    if t.get("is_starred"):
        labels.append("STARRED")
    ws.gmail.add_message(sender=sender, subject=t.get("subject", "(no subject)"), body=t.get("body_plain", ""),
                         to=[to], labels=labels, unread=not read, date=when)


def _thread(ws: Workspace, t: dict, rng: random.Random) -> int:
    lo, hi = t.get("age_range", (0, 30))
    base = ws.now - timedelta(days=rng.randint(lo, hi))
    labels = list(t.get("labels", ["INBOX"]))
    me, msgs = ws.me, t["messages"]
    thread_id = prev = None
    for i, m in enumerate(msgs):
        when = base + timedelta(minutes=m.get("minutes_offset", i * rng.randint(30, 480)))
        sent = m.get("is_sent", False) or m["sender_email"] == me.email
        read = rng.random() < m.get("is_read_probability", 0.8 if i < len(msgs) - 1 else 0.5)
        row = ws.gmail.add_message(sender=f"{me.name} <{me.email}>" if sent else f"{m['sender_name']} <{m['sender_email']}>",
                                   subject=t["subject"], body=m["body_plain"],
                                   to=[m.get("to_email", m["sender_email"]) if sent else me.email],
                                   labels=["SENT"] if sent else labels, unread=not read, date=when,
                                   thread_id=thread_id, in_reply_to=prev)
        thread_id, prev = row.threadId, row.messageIdHeader
    return len(msgs)


def _cycle(ws: Workspace, pool: list[dict], count: int, rng: random.Random, params: dict[str, list[str]] | None = None,
           old_ratio: float = 0.0, **kw: Any) -> None:
    for i in range(max(0, count) if pool else 0):
        t = pool[i % len(pool)]
        if params is not None:
            t = _fill_placeholders(t, params, rng)
        days = rng.randint(15, 60) if old_ratio > 0 and rng.random() < old_ratio else None
        _single(ws, t, rng, days=days, **kw)


def load_gmail_default(ws: Workspace, root: Path, conf: dict[str, Any], fixed: int, seed: int) -> None:
    """Fill the acting user's inbox the way env0 does around `fixed` planted needle messages."""
    target = conf.get("target_count", 3000)
    if not isinstance(target, int):  # "fixed_only": the needles alone
        return
    pools, params = _library(root)
    rng = random.Random(seed)
    if conf.get("include_ambiguous", True):
        for t in pools["ambiguous"]:
            _single(ws, t, rng)
        fixed += len(pools["ambiguous"])
    remaining = target - fixed
    if remaining <= 0:
        return
    dist = {**DISTRIBUTION, **(conf.get("distribution") or {})}
    n = {k: int(remaining * v) for k, v in dist.items() if k in DISTRIBUTION}
    n["notifications"] += remaining - sum(n.values())
    work = 0
    for t in pools["work"]:
        if work >= n["work"]:
            break
        work += _thread(ws, t, rng)
    flat = pools["work_singles"] + [
        {"sender_name": m["sender_name"], "sender_email": m["sender_email"], "subject": t["subject"],
         "body_plain": m["body_plain"], "is_sent": m.get("is_sent", False), "category": "",
         "is_read_probability": 0.7, "age_range": t.get("age_range", (0, 30))}
        for t in pools["work"] for m in t["messages"]]
    _cycle(ws, flat, n["work"] - work, rng)
    _cycle(ws, pools["notifications"], n["notifications"], rng, params=params,
           old_ratio=float(conf.get("old_notification_ratio", 0.5)))
    _cycle(ws, pools["newsletters"], n["newsletters"], rng)
    _cycle(ws, pools["personal"], n["personal"], rng)
    _cycle(ws, pools["sent"], n["sent"], rng, sent=True)
    _cycle(ws, pools["spam"], n["spam"], rng, spam=True)
