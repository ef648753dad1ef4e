"""Plant an env0 package's needles into our workspace and write the needle manifest its scripts read.

The needle vocabulary per service (learned from env0's seeders, implemented here on our own rows):
gmail NEEDLES / NEEDLE_THREADS (or `parameterize(rng)`), drive NEEDLES / NORMAL_FILES / TASK_FOLDERS with
fixed ids, folders as paths and shares, docs from the drive's Google Docs, slack SEED_USERS / SEED_CHANNELS /
SEED_MESSAGES, calendar NEEDLE_EVENTS (weekday + hour in the coming week). Our own seeded company is the
default fill. Ids are kept where the package fixes them: verifiers look them up.
"""

from __future__ import annotations

import functools
import random
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from types import ModuleType
from typing import Any
from zoneinfo import ZoneInfo

from ....workspace.base import DIGITS, make_id
from ....workspace.environment import Workspace
from ....workspace.services import registry
from ..package.load import Env0Error, load_needles

FOLDER = "application/vnd.google-apps.folder"
GDOC = "application/vnd.google-apps.document"


def seed_package(ws: Workspace, mod: ModuleType, services: tuple[str, ...], task_name: str, seed: int,
                 env0_root: Path | None = None) -> dict:
    """Plant every declared service's needles; returns the manifest (gmail needles, as env0 records them), with what
    our rows cannot hold under "_extras" (the runner hands it to the server, not to the manifest file)."""
    rng = random.Random(seed)
    needles: list[dict[str, Any]] = []
    for svc in services:
        if _fill_name(svc) and _fill_config(mod, svc, services).get("target_count") == "fixed_only":
            _clear_fill(ws, svc)
    if "gmail" in services:
        if env0_root is not None:  # env0's mock-gmail fills every inbox from its content library
            from .gmail_fill import clear_my_mail, load_gmail_default
            clear_my_mail(ws)
        needles = _gmail(ws, mod, rng)
        if env0_root is not None:
            fixed = len(needles) + sum(len(t.get("messages", [])) for t in getattr(mod, "NEEDLE_THREADS", None) or [])
            load_gmail_default(ws, Path(env0_root), getattr(mod, "GMAIL_FILL_CONFIG", None) or {}, fixed, seed)
    if "drive" in services or "docs" in services:
        _drive(ws, mod)
    extras: dict[str, Any] = {}
    if "slack" in services:
        if env0_root is not None:  # env0's mock-slack always seeds its base scenario under the needles
            from .env0_defaults import load_slack_default
            load_slack_default(ws, Path(env0_root), _fill_config(mod, "slack", ("slack",)), seed)
        _slack(ws, mod, extras)
    if "calendar" in services:
        conf = getattr(mod, "GCAL_FILL_CONFIG", None) or {}
        names = conf.get("seed_packs") or []
        _calendar(ws, mod, rng, load_seed_packs(env0_root, list(names), Path(getattr(mod, "__file__", "needles.py"))))
    if "stripe" in services:
        from .stripe import seed_stripe
        seed_stripe(ws, Path(mod.__file__).resolve().parent.parent, seed)
    if "auth" in services:
        from .auth import seed_auth
        seed_auth(ws, mod, extras)
    from .hooks import run_hooks
    run_hooks(ws, Path(getattr(mod, "__file__", "data/needles.py")).resolve().parent.parent)
    ws.snapshot("seed")  # the planted needles are the baseline /_admin/diff compares against
    return {"task": task_name, "seed": seed, "seeded_at": ws.now.strftime("%Y-%m-%dT%H:%M:%SZ"), "needles": needles,
            "_extras": extras}


def _fill_name(svc: str) -> str | None:
    """The needles module's fill-config name for one of our services (its env0 face's; None: it has no fill)."""
    face = registry.get(svc).env0
    return face.fill if face else None


def _fill_config(mod: ModuleType, svc: str, services: tuple[str, ...]) -> dict:
    """The service's own *_FILL_CONFIG, else FILL_CONFIG when the package seeds one service family only."""
    name = _fill_name(svc)
    own = getattr(mod, name, None) if name else None
    if isinstance(own, dict):
        return own
    shared = getattr(mod, "FILL_CONFIG", None)
    return shared if isinstance(shared, dict) and len(set(services) - {"docs", "auth"}) <= 1 else {}


def _clear_fill(ws: Workspace, svc: str) -> None:
    """`target_count: "fixed_only"`: the package wants its needles alone, without the default fill."""
    roots = {ws.drive.root_id(p.email) for p in ws.directory}
    face = registry.get(svc).env0  # Stripe has no default fill tables: its scenario is the whole account
    for table in [getattr(ws.service(name).db, t) for name, t in (face.fill_tables if face else ())]:
        for key in [k for k in table if k not in roots]:
            del table[key]  # one by one: Table counts versions on delete, dict.clear would bypass the memo


# -- gmail ----------------------------------------------------------------------------------------
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


# -- drive and docs -------------------------------------------------------------------------------
def _folder(ws: Workspace, path: str | None, cache: dict[str, str]) -> str | None:
    if not path:
        return None
    parent = None
    for i, part in enumerate(path.strip("/").split("/")):
        key = "/".join(path.strip("/").split("/")[: i + 1])
        if key not in cache:
            cache[key] = ws.drive.add_folder(part, parent=parent).id
        parent = cache[key]
    return parent


def _put_file(ws: Workspace, spec: dict, cache: dict[str, str]) -> None:
    now = ws.now
    shares = list(spec.get("shared_with") or [])
    if spec.get("overshare"):
        shares.append(spec["overshare"])
    users = {s["email"]: s.get("role", "reader") for s in shares if s.get("type", "user") in ("user", "group") and s.get("email")}
    anyone = next((s.get("role", "reader") for s in shares if s.get("type") == "anyone"), None)
    domain = next((s.get("role", "reader") for s in shares if s.get("type") == "domain"), None)
    modified = now - timedelta(days=spec.get("modified_days_ago", spec.get("days_ago", 0)))
    f = ws.drive.add_file(name=spec["name"], content=spec.get("content_text", ""), mime_type=spec.get("mimeType", GDOC),
                          parent=_folder(ws, spec.get("folder"), cache), shared_with=users, anyone=anyone,
                          domain_role=domain, modified=modified, description=spec.get("description"))
    created = (now - timedelta(days=spec.get("days_ago", 0))).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    fid = spec.get("id") or f.id
    # env0 gives every planted share its own permission id and its verifiers map a deleted id back to one file
    # through the action log; Drive reuses a user's id across files, so planted shares get per-file ids here
    perms = tuple(p if p.role == "owner" else
                  p.model_copy(update={"id": make_id(ws.seed, f"perm.{fid}", i, DIGITS, 20),
                                       "displayName": next((s.get("display_name") for s in shares
                                                            if s.get("email") == p.emailAddress), p.displayName)})
                  for i, p in enumerate(f.permissions))
    row = f.model_copy(update={"id": fid, "createdTime": min(created, f.modifiedTime), "permissions": perms})
    del ws.drive.db.files[f.id]
    ws.drive.db.files[fid] = row
    if fid != f.id and f.id in ws.docs.db.documents:
        doc = ws.docs.db.documents.pop(f.id)
        ws.docs.db.documents[fid] = doc.model_copy(update={"documentId": fid})
    if row.mimeType == GDOC and fid not in ws.docs.db.documents:
        ws.docs.ensure_document(fid, row.name, spec.get("content_text", ""))


def _drive(ws: Workspace, mod: ModuleType) -> None:
    cache: dict[str, str] = {}
    for path in getattr(mod, "TASK_FOLDERS", None) or []:
        _folder(ws, path, cache)
    for spec in list(getattr(mod, "NEEDLES", None) or []) + list(getattr(mod, "NORMAL_FILES", None) or []):
        if isinstance(spec, dict) and "name" in spec and "subject" not in spec:
            _put_file(ws, spec, cache)
    for c in getattr(mod, "COMMENTS", None) or []:
        if c.get("file_id") in ws.drive.db.files:
            ws.drive.add_comment(c["file_id"], c["content"], author=c.get("author"),
                                 quoted=c.get("quoted_text"), when=ws.now - timedelta(days=c.get("days_ago", 0)))


# -- slack ----------------------------------------------------------------------------------------
def _slack(ws: Workspace, mod: ModuleType, extras: dict[str, Any]) -> None:
    """SEED_INVITE_TRIGGERS (a person who, once DMed, invites the agent to a private channel: env0's mock does it,
    Slack has no such thing) go to `extras` for the server."""
    triggers: list[tuple[str, str]] = extras.setdefault("triggers", [])
    ids: dict[str, str] = {}
    by_email = {u.email: u.id for u in ws.slack.db.users.values()}
    for u in getattr(mod, "SEED_USERS", None) or []:
        uid = by_email.get(u.get("email", "")) if u.get("email") else None
        if uid is None:
            uid = ws.slack.add_user(id=u.get("id"), name=u["name"], real_name=u.get("real_name", u["name"]),
                                    email=u.get("email", ""), title=u.get("title", ""),
                                    is_admin=bool(u.get("is_admin", False)), is_bot=u.get("is_bot") or None).id
        ids[u["key"]] = uid
    for u in ws.slack.db.users.values():  # members named by handle when no SEED_USERS key matches
        ids.setdefault(u.name, u.id)
        ids.setdefault(u.name.split(".")[0], u.id)

    def uid(key: str) -> str:
        if key not in ids:
            ids[key] = ws.slack.add_user(name=key, real_name=key.replace("_", " ").title(), email=f"{key}@{ws.domain}").id
        return ids[key]

    for c in getattr(mod, "SEED_CHANNELS", None) or []:
        members = [uid(k) for k in c.get("members", [])]
        if ws.slack.me not in members and not c.get("is_private", False):
            members.append(ws.slack.me)  # env0's agent reads and posts in public channels; private ones need an invite
        if ws.slack.channel_by_name(c["name"]) is None:
            made = ws.slack.add_channel(c["name"], members=members, private=c.get("is_private", False),
                                        topic=c.get("topic", ""), purpose=c.get("purpose", ""),
                                        creator=uid(c["creator"]) if c.get("creator") else None)
            if c.get("id") and c["id"] != made.id:  # verifiers look channels up by the package's fixed id
                del ws.slack.db.channels[made.id]
                ws.slack.db.channels[c["id"]] = made.model_copy(update={"id": c["id"]})
        for pin in c.get("pins") or []:
            when = ws.now - timedelta(days=float(pin.get("days_ago", 1)))
            m = ws.slack.add_message(c["name"], user=uid(pin.get("pinned_by", "alex")), text=pin.get("text", ""), when=when)
            ws.slack.db.messages[f"{m.channel}/{m.ts}"] = m.model_copy(update={"pinned_to": (m.channel,)})
    for t in getattr(mod, "SEED_INVITE_TRIGGERS", None) or []:
        chan = ws.slack.channel_by_name(t["grant_channel"])
        if chan is not None and t.get("when_dm_to"):
            triggers.append((uid(t["when_dm_to"]), chan.id))
    seeded = getattr(mod, "SEED_MESSAGES", None) or {}
    for channel, msgs in seeded.items():
        if ws.slack.channel_by_name(channel) is None:
            ws.slack.add_channel(channel, members=[ws.slack.me])
        when_of = functools.partial(_posted_at, ws.now, len(msgs))
        for i, m in sorted(enumerate(msgs), key=lambda im: when_of(*im)):
            reactions: dict[str, list[str]] = {}
            for r in m.get("reactions") or []:
                reactions.setdefault(r.get("emoji", "thumbsup"), []).extend(uid(k) for k in r.get("users", []))
            parent = ws.slack.add_message(channel, user=uid(m["sender"]), text=m["text"], when=min(when_of(i, m), ws.now),
                                          reactions=reactions)
            when = when_of(i, m)
            for j, r in enumerate(m.get("thread") or []):
                ws.slack.add_message(channel, user=uid(r["sender"]), text=r["text"],
                                     when=min(when + timedelta(minutes=5 * (j + 1)), ws.now), thread_ts=parent.ts)


def _posted_at(now: datetime, n: int, i: int, m: dict) -> datetime:
    """env0's message times: days_ago / hours_ago, else one hour apart ending now; i-th message 0.1 s later."""
    if "days_ago" in m:
        return now - timedelta(days=float(m["days_ago"]), seconds=-0.1 * i)
    if "hours_ago" in m:
        return now - timedelta(hours=float(m["hours_ago"]), seconds=-0.1 * i)
    return now - timedelta(hours=n - i)


# -- calendar -------------------------------------------------------------------------------------
LOCAL_TZ = ZoneInfo("America/Los_Angeles")  # env0's calendar user: relative hours are local, start_iso is UTC


def _event_times(e: dict, now: datetime, rng: random.Random) -> tuple[datetime, datetime, bool]:
    """(start, end, all_day) in UTC from env0's event template fields, by env0's rules."""
    if isinstance(e.get("start"), dict):  # an API-shaped event: {"dateTime": ...} or {"date": ...}, naive = local
        def at(t: dict) -> datetime:
            if t.get("date") and not t.get("dateTime"):
                return datetime.combine(date.fromisoformat(str(t["date"])[:10]), time.min, tzinfo=timezone.utc)  # its day part
            dt = datetime.fromisoformat(str(t["dateTime"]).replace("Z", "+00:00"))
            return (dt if dt.tzinfo else dt.replace(tzinfo=ZoneInfo(t.get("timeZone") or "America/Los_Angeles"))
                    ).astimezone(timezone.utc)
        start = at(e["start"])
        end = at(e["end"]) if isinstance(e.get("end"), dict) else start + timedelta(hours=1)
        return start, end, "date" in e["start"] and not e["start"].get("dateTime")
    if e.get("start_iso"):
        start = datetime.fromisoformat(str(e["start_iso"]).replace("Z", "+00:00"))
        end = (datetime.fromisoformat(str(e["end_iso"]).replace("Z", "+00:00")) if e.get("end_iso")
               else start + timedelta(hours=float(e.get("duration_hours", 1))))
        return start, end, False
    today = now.astimezone(LOCAL_TZ).date()
    if e.get("start_date"):
        day = date.fromisoformat(str(e["start_date"]))
    elif e.get("weekday") is not None:
        ahead = (int(e["weekday"]) - today.weekday()) % 7 or 7
        day = today + timedelta(days=ahead + 7 * int(e.get("week_offset", 0)))
    elif "days_from_now" in e:
        day = today + timedelta(days=int(e["days_from_now"]))
    else:
        lo, hi = e.get("days_from_now_range", (-30, 30))
        day = today + timedelta(days=rng.randint(int(lo), int(hi)))
    if e.get("all_day"):
        start = datetime.combine(day, time.min, tzinfo=timezone.utc)
        return start, start + timedelta(days=max(1, int(e.get("duration_days", 1)))), True
    hour = float(e["start_hour"]) if "start_hour" in e else float(rng.choice(e.get("start_hour_choices", [9, 10, 14])))
    hours = float(e["duration_hours"]) if "duration_hours" in e else float(rng.choice(e.get("duration_hours_choices", [1, 2])))
    start = datetime.combine(day, time(int(hour), int(round((hour % 1) * 60))), tzinfo=LOCAL_TZ).astimezone(timezone.utc)
    return start, start + timedelta(hours=max(0.25, hours)), False


def load_seed_packs(env0_root: Path | None, names: list[str], needles_path: Path) -> list[dict]:
    """Events of env0's env-owned gcal seed packs, read at run time from the user's env0 checkout (never copied)."""
    if not names:
        return []
    if env0_root is None:
        raise Env0Error("seed needles", needles_path, f"uses env0's gcal seed packs {names}; pass --env0-root "
                        "(an env0 checkout) or set ENV0_ROOT")
    path = Path(env0_root) / "packages" / "environments" / "mock-gcal" / "mock_gcal" / "seed" / "task_packs.py"
    mod = load_needles(path)
    events: list[dict] = []
    for name in names:
        try:
            pack = mod.get_seed_pack(name)
        except Exception as e:  # noqa: BLE001 - env0 raises ValueError listing the packs it has
            raise Env0Error("seed needles", path, str(e)) from None
        events += [dict(x) for x in tuple(pack.needle_events) + tuple(pack.recurring_needles)]
    return events


def _calendar(ws: Workspace, mod: ModuleType, rng: random.Random, packs: list[dict]) -> None:
    conf = getattr(mod, "GCAL_FILL_CONFIG", None) or {}
    own = list(getattr(mod, "NEEDLE_EVENTS", None) or []) if conf.get("include_needles", True) else []
    cals: dict[str, str] = {"primary": ws.me.email}
    for e in packs + own:
        start, end, all_day = _event_times(e, ws.now, rng)
        key = str(e.get("calendar") or "primary")
        if key not in cals:
            cals[key] = ws.calendar.add_calendar(summary=key.replace("_", " ").title(), owner=ws.me.email).id
        attendees = [a["email"] if isinstance(a, dict) else a for a in e.get("attendees") or []]
        ev = ws.calendar.add_event(summary=e["summary"], start=start, end=end, attendees=attendees,
                                   description=e.get("description"), location=e.get("location"), all_day=all_day,
                                   organizer=cals[key] if key != "primary" else None)
        if e.get("recurrence"):
            rec = e["recurrence"] if isinstance(e["recurrence"], list) else [e["recurrence"]]
            ws.calendar.db.events[ev.id] = ev.model_copy(update={"recurrence": tuple(rec)})
