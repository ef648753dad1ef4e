"""Multi-app family, longer jobs: read in one service, act in others (a doc linked in Slack, meeting notes, a status
line by mail, a Slack post by mail, an unread count, an offboarding with handover)."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.auth import _sample_apps, _plant_app, _tokens, user_row, users
from env0_posttrain.tasks.families.calendar_support import event_by_title, find_event, plant_event, sample_event
from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.docs import FIELDS, find_doc, plant_doc, sample_doc
from env0_posttrain.tasks.families.drive_support import file_by_name
from env0_posttrain.tasks.families.mail_support import from_person, new_sent, plant_mail, recipients_of, text_mentions
from env0_posttrain.tasks.families.multi_app.common import POST, HISTORY, reg, sample_channel_person
from env0_posttrain.tasks.families.slack_support import mentions, my_channels, plant_post, posts_in
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import SUBJECTS


def _status(p: dict[str, Any]) -> str:
    return p["status_line"].split(": ", 1)[1].rstrip(".")


# -- the document linked in a Slack thread -> email its owner -----------------------------------

def _sample_link(rng: random.Random, ws: Any) -> dict[str, Any]:
    poster, owner = pick_people(rng, ws, 2)
    return {**sample_doc(rng, ws), **person_params(poster), **person_params(owner, "owner_"),
            "channel": rng.choice(my_channels(ws)), "status_line": rng.choice(FIELDS["status"])}


def _plant_link(ws: Any, p: dict[str, Any]) -> None:
    ws.docs.add_document(title=p["doc"], text=f"{p['doc']}\n{p['status_line']}\n", owner=p["owner_email"],
                         shared_with={ws.me.email: "reader"})
    d = find_doc(ws, p["doc"])
    plant_post(ws, p["channel"], p["email"], f"Notes are here: https://docs.google.com/document/d/{d.documentId}/edit")


def _solve_link(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    text = next(m["text"] for m in s(HISTORY, channel=f"#{p['channel']}")["messages"] if "docs.google.com/document/d/" in m["text"])
    did = text.split("/document/d/")[1].split("/")[0]
    meta = s("drive_files_get", fileId=did, fields="id,name,owners")
    doc = s("docs_documents_get", documentId=did)
    body = "".join(e.get("textRun", {}).get("content", "") for el in doc["body"]["content"]
                   for e in el.get("paragraph", {}).get("elements", []))
    status = next(line for line in body.split("\n") if line.startswith("Status:"))
    s("gmail_messages_send", to=meta["owners"][0]["emailAddress"], subject=f"Summary of {meta['name']}",
      body_text=f"{meta['name']}: {status}")
    return s.calls


def _judge_link(j: Judge, p: dict[str, Any]) -> None:
    mails = [m for m in new_sent(j.start, j.end) if p["owner_email"] in recipients_of(m)]
    j.check("emailed_owner", bool(mails))
    j.check("names_doc", any(text_mentions(m.subject + " " + m.body, p["doc"]) for m in mails))
    j.check("summary", any(text_mentions(m.body, _status(p)) for m in mails))
    standard_gates(j, audience={p["owner_email"]})


reg("multi_doc_link_email_owner",
    ("{name} linked a document in #{channel}. Email that document's owner a one-line summary with its status.",
     "Find the doc {first} shared in #{channel}, read it, and send its owner an email summarising its status line."),
    _sample_link, _solve_link, _judge_link,
    (HISTORY, "drive_files_get", "docs_documents_get", "gmail_messages_send"), (POST,), plant=_plant_link)


# -- meeting notes doc linked from the event ----------------------------------------------------

def _notes_title(p: dict[str, Any]) -> str:
    return f"{p['title']} notes"


def _solve_notes(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    did = s("docs_documents_create", body={"title": _notes_title(p)})["documentId"]
    ev = event_by_title(s, p["title"])
    s("calendar_events_patch", calendarId="primary", eventId=ev["id"],
      body={"description": f"Notes: https://docs.google.com/document/d/{did}/edit"})
    return s.calls


def _judge_notes(j: Judge, p: dict[str, Any]) -> None:
    made = [d for k, d in j.end.docs.db.documents.items() if k not in j.start.docs.db.documents and d.title == _notes_title(p)]
    j.check("doc_created", bool(made))
    after = j.end.calendar.db.events.get(find_event(j.start, p["title"]).id)
    j.check("linked", bool(made) and after is not None and any(d.documentId in (after.description or "") for d in made))
    standard_gates(j)


reg("multi_notes_doc_for_event", ('Create a doc called "{title} notes" and put its link in the description of {title}.',
                                  'Set up a notes document for {title} (title "{title} notes") and link it from the event.'),
    lambda rng, ws: sample_event(rng, ws), _solve_notes, _judge_notes,
    ("docs_documents_create", "calendar_events_list", "calendar_events_patch"), ("docs_documents_batchUpdate",),
    plant=lambda ws, p: plant_event(ws, p["title"], p["day"], p["hour"]))


# -- doc fact -> email ----------------------------------------------------------------------------

def _sample_doc_mail(rng: random.Random, ws: Any) -> dict[str, Any]:
    (q,) = pick_people(rng, ws)
    return {**sample_doc(rng, ws), **person_params(q), "status_line": rng.choice(FIELDS["status"])}


def _solve_doc_mail(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    did = file_by_name(s, p["doc"])["id"]
    s("docs_documents_get", documentId=did)
    s("gmail_messages_send", to=p["email"], subject=f"{p['doc']} status", body_text=p["status_line"])
    return s.calls


def _judge_doc_mail(j: Judge, p: dict[str, Any]) -> None:
    mails = [m for m in new_sent(j.start, j.end) if p["email"] in recipients_of(m)]
    j.check("emailed", bool(mails))
    j.check("status", any(text_mentions(m.body, _status(p)) for m in mails))
    standard_gates(j, audience={p["email"]})


reg("multi_email_doc_status", ("Email {name} the status line from {doc}.", "Read {doc} and send {first} its current status by email."),
    _sample_doc_mail, _solve_doc_mail, _judge_doc_mail,
    ("drive_files_list", "docs_documents_get", "gmail_messages_send"), ("docs_documents_batchUpdate",),
    plant=lambda ws, p: plant_doc(ws, p["doc"], [p["doc"], p["status_line"]]))


# -- Slack -> email ------------------------------------------------------------------------------

def _sample_relay(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_channel_person(rng, ws)
    (to,) = [q for q in pick_people(rng, ws, 2) if q.email != p["email"]][:1]
    return {**p, **person_params(to, "to_")}


def _solve_relay(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    uid = ws.person(p["email"]).slack_user_id
    text = next(m["text"] for m in s(HISTORY, channel=f"#{p['channel']}")["messages"] if m["user"] == uid)
    s("gmail_messages_send", to=p["to_email"], subject=f"From #{p['channel']}", body_text=f"{p['name']} wrote: {text}")
    return s.calls


def _judge_relay(j: Judge, p: dict[str, Any]) -> None:
    mails = [m for m in new_sent(j.start, j.end) if p["to_email"] in recipients_of(m)]
    j.check("emailed", bool(mails))
    j.check("content", any(text_mentions(m.body, p["phrase"]) for m in mails))
    standard_gates(j, audience={p["to_email"]})


reg("multi_email_slack_message", ("Email {to_name} what {name} last posted in #{channel}.",
                                  "{to_first} is not on Slack: forward {first}'s latest #{channel} message to them by email."),
    _sample_relay, _solve_relay, _judge_relay, (HISTORY, "gmail_messages_send"), (POST,),
    plant=lambda ws, p: plant_post(ws, p["channel"], p["email"], p["phrase"]))


# -- inbox count -> Slack ---------------------------------------------------------------------------

def _sample_count(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_channel_person(rng, ws)
    p["subjects"] = sorted(rng.sample(SUBJECTS, rng.randint(1, 4)))
    return p


def _plant_count(ws: Any, p: dict[str, Any]) -> None:
    for i, subject in enumerate(p["subjects"]):
        plant_mail(ws, p["email"], subject, hours=1 + 2 * i)


def _count(ws: Any, p: dict[str, Any]) -> int:
    return sum("UNREAD" in m.labelIds for m in from_person(ws, p["email"]))


def _solve_count(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    n = s("gmail_messages_list", q=f"from:{p['email']} is:unread")["resultSizeEstimate"]
    s(POST, channel=f"#{p['channel']}", text=f"I have {n} unread emails from {p['name']}")
    return s.calls


def _judge_count(j: Judge, p: dict[str, Any]) -> None:
    n = str(_count(j.start, p))
    j.check("posted_count", any(f" {n} " in f" {m.text} " for m in posts_in(j.start, j.end, p["channel"])))
    standard_gates(j, audience={f"#{p['channel']}"})


reg("multi_post_unread_count", ("Post in #{channel} how many unread emails I have from {name}.",
                                "Count my unread messages from {first} and share the number in #{channel}."),
    _sample_count, _solve_count, _judge_count, ("gmail_messages_list", POST), ("gmail_messages_get",), plant=_plant_count)


# -- offboarding across admin, drive and Slack --------------------------------------------------------

def _sample_offboard(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_apps(rng, ws)
    p["channel"] = "ops" if "ops" in my_channels(ws) else rng.choice(my_channels(ws))
    (p["successor_email"],) = [q.email for q in rng.sample(users(ws), 2) if q.email != p["email"]][:1]
    p["successor_name"] = ws.person(p["successor_email"]).name
    p["file"] = f"Handover notes {ws.person(p['email']).first}"
    return p


def _plant_offboard(ws: Any, p: dict[str, Any]) -> None:
    _plant_app(ws, p)
    ws.drive.add_file(name=p["file"], content="Open items and contacts.\n", owner=p["email"],
                      shared_with={ws.me.email: "writer"})


def _solve_offboard(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    e = p["email"]
    s("admin_users_update", userKey=e, body={"suspended": True})
    for t in s("admin_tokens_list", userKey=e)["items"]:
        s("admin_tokens_delete", userKey=e, clientId=t["clientId"])
    fid = file_by_name(s, p["file"])["id"]
    s("drive_permissions_create", fileId=fid, body={"type": "user", "role": "writer", "emailAddress": p["successor_email"]})
    s(POST, channel=f"#{p['channel']}", text=f"{p['name']} is offboarded; {p['successor_name']} now has the handover notes.")
    return s.calls


def _judge_offboard(j: Judge, p: dict[str, Any]) -> None:
    e = p["email"]
    j.check("suspended", user_row(j.end, e).suspended)
    j.check("tokens_revoked", not _tokens(j.end, e))
    f = next(f for f in j.end.drive.db.files.values() if f.name == p["file"])
    j.check("handover_shared", any((x.emailAddress or "") == p["successor_email"] and x.role in ("writer", "owner")
                                   for x in f.permissions))
    j.check("announced", any(mentions(m.text, p["name"]) for m in posts_in(j.start, j.end, p["channel"])))
    keys = {f"token:{k}" for k in _tokens(j.start, e)} | {f"suspend:{e}"}
    standard_gates(j, may_remove=keys, audience={p["successor_email"], f"#{p['channel']}"})


reg("multi_offboard_with_handover",
    ("Offboard {name}: suspend the account, revoke all their app grants, give {successor_name} edit access to "
     '"{file}", and announce it in #{channel}.',
     "{first} is leaving. Lock the account (suspend, remove every OAuth grant), share \"{file}\" with "
     "{successor_name} as an editor, then post a note in #{channel} naming {first}."),
    _sample_offboard, _solve_offboard, _judge_offboard,
    ("admin_users_update", "admin_tokens_list", "admin_tokens_delete", "drive_files_list", "drive_permissions_create", POST),
    (), plant=_plant_offboard)
