"""Filler for a seeded company: realistic background around the items a task plants.

Everything is drawn from per-service `random.Random(f"{seed}:...")` streams, so the same seed
always yields byte-identical state, whatever else the process has done.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from .seeding_google import seed_drive_discussion, seed_mail_settings, start_logs
from .seed_text import (CHANNELS, DOC_TEMPLATES, EXTERNAL_SENDERS, FILE_TEMPLATES, FOLDERS, INTERNAL_TOPICS,
                        MEETINGS, OAUTH_APPS, SLACK_LINES)

if TYPE_CHECKING:
    from .environment import Workspace


def populate(ws: "Workspace") -> None:
    seed_mail(ws, random.Random(f"{ws.seed}:gmail"))
    seed_calendar(ws, random.Random(f"{ws.seed}:calendar"))
    seed_drive(ws, random.Random(f"{ws.seed}:drive"))
    seed_slack(ws, random.Random(f"{ws.seed}:slack"))
    seed_admin(ws, random.Random(f"{ws.seed}:admin"))
    seed_mail_settings(ws, random.Random(f"{ws.seed}:gmail-settings"))
    seed_drive_discussion(ws, random.Random(f"{ws.seed}:drive-comments"))
    start_logs(ws)


def _colleagues(ws: "Workspace") -> list:
    return [p for p in ws.directory if p.email != ws.me.email]


def _past(ws: "Workspace", rng: random.Random, days: int = 30) -> datetime:
    t = ws.now - timedelta(days=rng.randrange(days), hours=rng.randrange(10), minutes=rng.randrange(60))
    return t.replace(second=0, microsecond=0)


def seed_mail(ws: "Workspace", rng: random.Random) -> None:
    g = ws.gmail
    labels = {name: g.add_label(name).id for name in ("Projects", "Receipts", "Travel", "Vendors")}
    me = ws.me
    people = _colleagues(ws)
    for _ in range(28):  # internal threads, some with a reply from me
        p = rng.choice(people)
        topic = rng.choice(INTERNAL_TOPICS)
        when = _past(ws, rng, 21)
        subject = topic["subject"].format(dept=p.department)
        first = g.add_message(sender=f"{p.name} <{p.email}>", to=[me.email], subject=subject,
                              body=topic["body"].format(me=me.first, sender=p.first, dept=p.department),
                              date=when, unread=rng.random() < 0.35,
                              labels=["INBOX", "IMPORTANT"] + ([labels["Projects"]] if rng.random() < 0.3 else []))
        if rng.random() < 0.5:
            g.add_message(sender=f"{me.name} <{me.email}>", to=[p.email], subject=f"Re: {subject}",
                          body=f"Thanks {p.first}, {rng.choice(topic['replies'])}\n\n{me.first}",
                          date=when + timedelta(hours=1 + rng.randrange(5)), labels=["SENT"], unread=False,
                          thread_id=first.threadId, in_reply_to=first.messageIdHeader)
    for _ in range(30):  # vendors, newsletters, notifications
        s = rng.choice(EXTERNAL_SENDERS)
        n = rng.randrange(1000, 9999)
        atts = [{"filename": f"invoice-{n}.pdf", "mimeType": "application/pdf",
                 "content": f"%PDF-1.4 invoice {n} total {rng.randrange(200, 9000)}.00 USD"}] if s["attach"] else None
        extra = [labels["Receipts"]] if s["attach"] else ([labels["Vendors"]] if s["category"] == "CATEGORY_UPDATES" else [])
        g.add_message(sender=s["from"], to=[me.email], subject=s["subject"].format(n=n),
                      body=s["body"].format(n=n, me=me.first, company=ws.company.name), date=_past(ws, rng, 30),
                      unread=rng.random() < 0.5, labels=["INBOX", s["category"]] + extra, attachments=atts)


def seed_calendar(ws: "Workspace", rng: random.Random) -> None:
    cal = ws.calendar
    people = _colleagues(ws)
    ceo = ws.directory[0]
    holidays = cal.add_calendar(summary="Company Holidays", owner=ceo.email, me_role="reader")
    _ = holidays
    day0 = ws.now.replace(hour=0, minute=0, second=0, microsecond=0)
    for d in range(-7, 15):
        day = day0 + timedelta(days=d)
        if day.weekday() >= 5:
            continue
        cal.add_event(summary="Ops standup", start=day.replace(hour=16), end=day.replace(hour=16, minute=15),
                      attendees=[ws.me.email] + [p.email for p in people if p.department == "Operations"],
                      responses={p.email: "accepted" for p in people})
        for _ in range(rng.randrange(1, 3)):
            m = rng.choice(MEETINGS)
            hour = rng.choice([9, 10, 11, 13, 14, 15, 17])
            others = rng.sample(people, rng.randrange(1, 4))
            organizer = ws.me.email if rng.random() < 0.5 else others[0].email
            start = day.replace(hour=hour, minute=rng.choice([0, 30]))
            cal.add_event(summary=m["summary"], description=m["description"], location=m.get("location"),
                          start=start, end=start + timedelta(minutes=m["minutes"]), organizer=organizer,
                          attendees=sorted({ws.me.email, organizer, *(p.email for p in others)}),
                          responses={p.email: rng.choice(["accepted", "accepted", "tentative", "needsAction"])
                                     for p in others} | ({ws.me.email: "accepted"} if organizer != ws.me.email else {}))
        for p in rng.sample(people, 6):  # colleagues' own busy blocks, seen through freebusy
            start = day.replace(hour=rng.choice([9, 10, 13, 14, 15, 16]), minute=rng.choice([0, 30]))
            cal.add_event(summary=rng.choice(["Focus time", "1:1", "Customer call", "Interview", "Design review"]),
                          start=start, end=start + timedelta(minutes=rng.choice([30, 60, 90])), organizer=p.email,
                          attendees=[p.email])
    # sharing as a Workspace account has it: the domain sees free/busy, one teammate sees details
    cal.add_acl(ws.me.email, role="freeBusyReader", scope_type="domain", value=ws.domain)
    cal.add_acl(ws.me.email, role="reader", value=rng.choice(people).email)


def seed_drive(ws: "Workspace", rng: random.Random) -> None:
    drive, docs = ws.drive, ws.docs
    people = _colleagues(ws)
    folders = {}
    for name, dept in FOLDERS:
        owner = ws.me.email if dept is None else next((p.email for p in ws.directory if p.department == dept),
                                                       ws.me.email)
        shared = {} if owner == ws.me.email else {ws.me.email: "writer"}
        folders[name] = drive.add_folder(name, owner=owner, shared_with=shared)
    for t in FILE_TEMPLATES:
        folder = folders[t["folder"]]
        when = _past(ws, rng, 90)
        shared = {}
        if folder.ownerEmail != ws.me.email:
            shared[ws.me.email] = rng.choice(["reader", "writer"])
        for p in rng.sample(people, rng.randrange(0, 3)):
            if p.email != folder.ownerEmail:
                shared[p.email] = rng.choice(["reader", "commenter", "writer"])
        kw = dict(parent=folder.id, owner=folder.ownerEmail, shared_with=shared, modified=when,
                  anyone="reader" if t.get("public") else None, domain_role="reader" if t.get("domain") else None)
        if t["mime"] == "doc":
            docs.add_document(title=t["name"], text=DOC_TEMPLATES[t["body"]].format(company=ws.company.name,
                                                                                     me=ws.me.name),
                              folder=folder.id, owner=folder.ownerEmail, shared_with=shared,
                              domain_role="reader" if t.get("domain") else None)
        else:
            drive.add_file(name=t["name"], content=t["body"].format(company=ws.company.name, n=rng.randrange(10, 99)),
                           mime_type=t["mime"], **kw)


def seed_slack(ws: "Workspace", rng: random.Random) -> None:
    slack = ws.slack
    people = ws.directory
    me = ws.me.slack_user_id
    start = ws.now - timedelta(days=60)
    for spec in CHANNELS:
        dept = spec.get("dept")
        if spec.get("private"):
            members = [p.slack_user_id for p in people if p.department in ("Executive", "Operations")]
        elif dept:
            members = [p.slack_user_id for p in people if p.department == dept] + [me]
        else:
            members = [p.slack_user_id for p in people]
        slack.add_channel(spec["name"], members=sorted(set(members)), private=bool(spec.get("private")),
                          topic=spec["topic"], purpose=spec["purpose"], creator=members[0], created=start,
                          is_general=spec["name"] == "general")
    chans = [slack.channel_by_name(s["name"]) for s in CHANNELS]
    msgs = []
    for _ in range(110):
        c = rng.choice(chans)
        msgs.append((_past(ws, rng, 14), c, rng.choice(c.members), rng.choice(SLACK_LINES[c.name])))
    msgs.sort(key=lambda x: x[0])
    for when, c, user, text in msgs:
        m = slack.add_message(c.id, user=user, text=text, when=when,
                              reactions={"thumbsup": [rng.choice(c.members)]} if rng.random() < 0.2 else None)
        if rng.random() < 0.15:
            slack.add_message(c.id, user=rng.choice(c.members), text="Makes sense, thanks!",
                              when=when + timedelta(minutes=5), thread_ts=m.ts)


def seed_admin(ws: "Workspace", rng: random.Random) -> None:
    admin = ws.admin
    people = ws.directory
    admin.add_group(f"all@{ws.domain}", name="Everyone", description="All employees",
                    members={p.email: "MEMBER" for p in people})
    for dept in ("Engineering", "Sales", "Marketing", "Finance"):
        members = {p.email: ("OWNER" if i == 0 else "MEMBER")
                   for i, p in enumerate(x for x in people if x.department == dept)}
        admin.add_group(f"{dept.lower()}@{ws.domain}", name=dept, description=f"The {dept} team", members=members)
    admin.add_group(f"leadership@{ws.domain}", name="Leadership", description="Department heads",
                    members={p.email: "MEMBER" for p in people if p.title.split()[0] in ("Chief", "VP", "Head")})
    for p in rng.sample(people, 10):
        for app in rng.sample(OAUTH_APPS, rng.randrange(1, 3)):
            admin.add_token(p.email, display_text=app["name"], scopes=app["scopes"])
    for p in rng.sample(people, 4):
        created = ws.now - timedelta(days=rng.randrange(30, 400))
        admin.add_asp(p.email, name=rng.choice(["Thunderbird", "Old iPhone Mail", "Printer scanner", "Outlook 2016"]),
                      created=created, last_used=created + timedelta(days=rng.randrange(1, 25)))
