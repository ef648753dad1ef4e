"""Filler for the Gmail settings and Drive discussions of a seeded company (run after the other filler).

Each part draws from its own `random.Random(f"{seed}:...")` stream, so adding it left every other
service's seeded content as it was: one receipts filter and a signature on the agent user's mailbox,
colleagues' comments (some answered, one resolved) on documents the agent user can open, and a
"Company Shared" shared drive (the agent user a writer) holding one file.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .environment import Workspace

COMMENTS = ["Can we double-check these numbers before Friday?", "This section is out of date since the reorg.",
            "Who owns this item now?", "Please add the Q2 targets here.", "Typo in the second paragraph.",
            "Should legal review this first?"]
ANSWERS = ["Good catch, I'll fix it today.", "I think Finance owns it now.", "Agreed, let's discuss on Thursday."]


def seed_mail_settings(ws: "Workspace", rng: random.Random) -> None:
    g = ws.gmail
    receipts = next(l.id for l in g.user_labels(ws.me.email) if l.name == "Receipts")
    g.add_filter({"subject": "receipt"}, {"addLabelIds": [receipts]})
    title = rng.choice(["", ws.me.title])
    g.db.sendAs[f"{ws.me.email}/{ws.me.email}"] = g._send_as(ws.me.email, ws.me.email).model_copy(
        update={"signature": f"{ws.me.name}" + (f"\n{title}" if title else "") + f"\n{ws.company.name}"})


def seed_drive_discussion(ws: "Workspace", rng: random.Random) -> None:
    drive = ws.drive
    me = ws.me.email
    docs = sorted((f for f in drive.db.files.values() if f.id in ws.docs.db.documents and drive.caller_role(f.id) >= 2),
                  key=lambda f: f.id)
    people = [p.email for p in ws.directory if p.email != me]
    for f in rng.sample(docs, min(3, len(docs))):
        author = rng.choice([p for p in people if p != f.ownerEmail] or people)
        when = ws.now - timedelta(days=rng.randrange(1, 10), hours=rng.randrange(8))
        c = drive.add_comment(f.id, rng.choice(COMMENTS), author=author, when=when)
        if rng.random() < 0.6:
            replier = f.ownerEmail if f.ownerEmail != author else me
            drive.add_reply(c.id, rng.choice(ANSWERS), author=replier,
                            action="resolve" if rng.random() < 0.3 else None)
    lead = next((p for p in ws.directory if p.email != me), ws.me)
    team = ws.drive.add_shared_drive("Company Shared", creator=lead.email, members={me: "writer"})
    drive.add_file(name="Team directory.csv", content="name,team\n" + "".join(
        f"{p.name},{p.department}\n" for p in ws.directory[:6]), mime_type="text/csv", parent=team.id, owner=lead.email)


def start_logs(ws: "Workspace") -> None:
    """The company's history starts now: Gmail history and Drive changes are kept from the end of the filler on
    (as Gmail keeps about a week of history), so snapshots and savepoints do not copy a log of the seeding."""
    from .base import Table

    ws.gmail.db.historyLog = Table()
    ws.gmail.db.historyFloor = ws.gmail.db.history
    ws.drive.db.changeLog = Table()
