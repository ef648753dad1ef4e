"""Templates that need the Gmail and Drive methods beyond the basics: a mail filter (users.settings.filters),
thread triage (users.threads.modify), an out-of-office reply (users.settings.updateVacation) and resolving a
comment on a doc (Drive replies with action "resolve")."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.drive_support import file_by_name, sample_file
from env0_posttrain.tasks.families.mail_support import (find_mail, label_id, labels_changed_elsewhere, query_for,
                                                        sample_mail, text_mentions)
from env0_posttrain.tasks.gates import _address, standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import BODIES, LABELS
from env0_posttrain.tasks.template import Template, register

REPLIES = ("Done, thanks for flagging.", "Fixed in the latest version.", "Updated the figures as suggested.",
           "Good catch, corrected.", "Changed it, please take another look.")
COMMENTS = ("The totals in section 2 look off.", "Can you add the owner for each item?", "This date seems wrong.",
            "Please spell out the acronym here.", "Is this still the current plan?")
AWAY = (("Out of office", "I am away and will reply when I am back."),
        ("On vacation", "I'm on vacation with limited access to email."),
        ("Away this week", "I'm travelling; for anything urgent please contact the team."))
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def _reg(tid: str, family: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any,
         tools: tuple[str, ...], distractors: tuple[str, ...], plant: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=family, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, **kw))


# -- filter: future mail from someone gets a label and skips the inbox ------------------------------------

def _sample_filter(rng: random.Random, ws: Any) -> dict[str, Any]:
    (p,) = pick_people(rng, ws)
    return {**person_params(p), "label": rng.choice(LABELS)}


def _plant_filter(ws: Any, p: dict[str, Any]) -> None:
    if label_id(ws, p["label"]) is None:
        ws.gmail.add_label(p["label"])


def _solve_filter(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    lid = next(l["id"] for l in s("gmail_labels_list")["labels"] if l["name"].lower() == p["label"].lower())
    s("gmail_settings_filters_create", body={"criteria": {"from": p["email"]},
                                             "action": {"addLabelIds": [lid], "removeLabelIds": ["INBOX"]}})
    return s.calls


def _judge_filter(j: Judge, p: dict[str, Any]) -> None:
    me, lid = j.end.me.email, label_id(j.end, p["label"])
    before = {f.id for f in j.start.gmail.filters_of(me)}
    made = [f for f in j.end.gmail.filters_of(me) if f.id not in before]
    hit = next((f for f in made if p["email"] in (f.criteria.get("from", "") + " " + f.criteria.get("query", "")).lower()),
               None)
    action = hit.action if hit else {}
    j.check("filter_on_sender", hit is not None, f"new filters: {[f.criteria for f in made]}")
    j.check("adds_label", lid is not None and lid in action.get("addLabelIds", []))
    j.check("skips_inbox", "INBOX" in action.get("removeLabelIds", []))
    j.guard("other_filters_kept", {f.id for f in j.end.gmail.filters_of(me)} >= before)
    j.guard("existing_mail_untouched", not labels_changed_elsewhere(j.start, j.end, set()))
    standard_gates(j)


_reg("mail_filter_sender_to_label", "mail",
     ('From now on, mail from {name} should get the "{label}" label and skip my inbox. Set up a filter.',
      'Create a Gmail filter: messages from {email} are labelled {label} and archived (not in the inbox).',
      'Make new emails from {first} go straight to "{label}" instead of my inbox.'),
     _sample_filter, _solve_filter, _judge_filter, ("gmail_labels_list", "gmail_settings_filters_create"),
     ("gmail_settings_filters_list", "gmail_messages_batchModify", "gmail_labels_create"), plant=_plant_filter)


# -- thread triage: archive a whole conversation and mark it read -------------------------------------------

def _plant_thread(ws: Any, p: dict[str, Any]) -> None:
    person = ws.person(p["email"])
    header = f"{person.name} <{person.email}>"
    body = BODIES.get(p["subject"], p["subject"])
    first = ws.gmail.add_message(sender=header, subject=p["subject"], body=body, date=ws.now - timedelta(hours=30))
    ws.gmail.add_message(sender=f"{ws.me.name} <{ws.me.email}>", to=[person.email], subject=f"Re: {p['subject']}",
                         body="Thanks, looking at it.", labels=["SENT"], unread=False, thread_id=first.threadId,
                         date=ws.now - timedelta(hours=26))
    ws.gmail.add_message(sender=header, subject=f"Re: {p['subject']}", body="One more detail attached inline.",
                         thread_id=first.threadId, date=ws.now - timedelta(hours=3))


def _thread_ids(ws: Any, p: dict[str, Any]) -> tuple[str, set[str]]:
    tid = find_mail(ws, p["email"], p["subject"]).threadId
    return tid, {m.id for m in ws.gmail.mailbox() if m.threadId == tid}


def _solve_thread(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    tid = s("gmail_messages_list", q=query_for(p["email"], p["subject"]))["messages"][0]["threadId"]
    s("gmail_threads_modify", id=tid, body={"removeLabelIds": ["INBOX", "UNREAD"]})
    return s.calls


def _judge_thread(j: Judge, p: dict[str, Any]) -> None:
    tid, ids = _thread_ids(j.start, p)
    msgs = [j.end.gmail.db.messages.get(i) for i in ids]
    j.check("thread_archived", all(m is not None and "INBOX" not in m.labelIds for m in msgs))
    j.check("thread_read", all(m is not None and "UNREAD" not in m.labelIds for m in msgs))
    j.guard("kept_not_trashed", all(m is not None and "TRASH" not in m.labelIds for m in msgs))
    j.guard("other_mail_untouched", not labels_changed_elsewhere(j.start, j.end, ids))
    standard_gates(j)


_reg("mail_archive_thread_read", "mail",
     ('Archive the whole "{subject}" conversation with {name} and mark all of it as read.',
      'Clear the "{subject}" thread from {first} out of my inbox (every message in it), marked read.',
      'I am done with the {subject} thread ({email}): mark it read and archive it, all messages.'),
     sample_mail, _solve_thread, _judge_thread, ("gmail_messages_list", "gmail_threads_modify"),
     ("gmail_threads_trash", "gmail_messages_modify", "gmail_threads_get"), plant=_plant_thread)


# -- vacation responder --------------------------------------------------------------------------------------

def _sample_vacation(rng: random.Random, ws: Any) -> dict[str, Any]:
    subject, message = rng.choice(AWAY)
    first = rng.randrange(0, 3)
    return {"subject": subject, "message": message, "start_day": DAYS[first],
            "end_day": DAYS[first + rng.randrange(1, 5 - first)], "domain_only": (only := rng.random() < 0.5),
            "who": "only people in my company" if only else "everyone who writes to me"}


def _day_ms(ws: Any, day: str, end: bool) -> int:
    """Next week's `day` (the clock is a Wednesday), 00:00 UTC, or the end of it."""
    monday = (ws.now + timedelta(days=7 - ws.now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    when = monday + timedelta(days=DAYS.index(day) + (1 if end else 0))
    return int(when.timestamp() * 1000)


def _solve_vacation(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("gmail_settings_updateVacation", body={
        "enableAutoReply": True, "responseSubject": p["subject"], "responseBodyPlainText": p["message"],
        "restrictToDomain": p["domain_only"], "startTime": str(_day_ms(ws, p["start_day"], False)),
        "endTime": str(_day_ms(ws, p["end_day"], True))})
    return s.calls


def _judge_vacation(j: Judge, p: dict[str, Any]) -> None:
    v = j.end.gmail.setting(j.end.me.email, "vacation")
    start, end = int(v.get("startTime") or 0), int(v.get("endTime") or 0)
    want_start, want_end = _day_ms(j.end, p["start_day"], False), _day_ms(j.end, p["end_day"], True)
    j.check("enabled", v.get("enableAutoReply") is True)
    j.check("subject", text_mentions(v.get("responseSubject", ""), p["subject"]))
    j.check("message", text_mentions(v.get("responseBodyPlainText", "") or v.get("responseBodyHtml", ""), p["message"]))
    j.check("dates", abs(start - want_start) <= 86_400_000 and abs(end - want_end) <= 86_400_000,
            f"{start}-{end}, wanted about {want_start}-{want_end}")
    j.check("audience", bool(v.get("restrictToDomain")) == p["domain_only"])
    standard_gates(j)


_reg("mail_vacation_responder", "mail",
     ('Turn on my out-of-office reply from {start_day} to {end_day} next week, subject "{subject}", message: '
      '"{message}". It should go to {who}.',
      'Set a vacation auto-reply for next week {start_day} through {end_day} with the subject "{subject}" and the text '
      '"{message}", sent to {who}.'),
     _sample_vacation, _solve_vacation, _judge_vacation, ("gmail_settings_updateVacation",),
     ("gmail_settings_getVacation", "gmail_settings_updateAutoForwarding", "gmail_drafts_create"))


# -- comment resolution on a doc --------------------------------------------------------------------------------

def _sample_comment(rng: random.Random, ws: Any) -> dict[str, Any]:
    a, b = pick_people(rng, ws, 2)
    comment, other = rng.sample(COMMENTS, 2)
    return {**sample_file(rng, ws), **person_params(a), "other_email": b.email, "comment": comment,
            "other_comment": other, "reply": rng.choice(REPLIES)}


def _plant_comment(ws: Any, p: dict[str, Any]) -> None:
    doc = ws.docs.add_document(title=p["file"], text=f"{p['file']}\n\nDraft for review.\n",
                               shared_with={p["email"]: "commenter", p["other_email"]: "commenter"})
    ws.drive.add_comment(doc.documentId, p["comment"], author=p["email"], when=ws.now - timedelta(hours=5))
    ws.drive.add_comment(doc.documentId, p["other_comment"], author=p["other_email"], when=ws.now - timedelta(hours=4))


def _comments(ws: Any, p: dict[str, Any]) -> dict[str, Any]:
    fid = next(f.id for f in ws.drive.db.files.values() if f.name == p["file"])
    return {c.content: c for c in ws.drive.db.comments.values() if c.fileId == fid}


def _solve_comment(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    f = file_by_name(s, p["file"])
    listed = s("drive_comments_list", fileId=f["id"], fields="comments(id,content,author,resolved)")["comments"]
    cid = next(c["id"] for c in listed if c["content"] == p["comment"])
    s("drive_replies_create", fileId=f["id"], commentId=cid, fields="id,action",
      body={"content": p["reply"], "action": "resolve"})
    return s.calls


def _judge_comment(j: Judge, p: dict[str, Any]) -> None:
    start = _comments(j.start, p)
    target, other = start[p["comment"]], start[p["other_comment"]]
    now = j.end.drive.db.comments.get(target.id)
    mine = [r for r in j.end.drive.replies_of(target.id) if _address(r.authorEmail) == j.end.me.email]
    j.check("resolved", now is not None and now.resolved and not now.deleted)
    j.check("replied", any(text_mentions(r.content, p["reply"]) for r in mine), f"replies: {[r.content for r in mine]}")
    j.guard("other_comment_open", j.end.drive.db.comments.get(other.id) == other
            and not j.end.drive.replies_of(other.id))
    j.guard("doc_unchanged", j.end.docs.db.documents.get(target.fileId) == j.start.docs.db.documents.get(target.fileId))
    standard_gates(j)


_reg("docs_resolve_comment_with_reply", "docs",
     ('On the doc "{file}", reply to {name}\'s comment "{comment}" with "{reply}" and resolve it.',
      'In "{file}", answer {first}\'s comment ("{comment}") saying "{reply}", then mark the comment resolved.'),
     _sample_comment, _solve_comment, _judge_comment, ("drive_files_list", "drive_comments_list", "drive_replies_create"),
     ("drive_comments_delete", "drive_comments_update", "docs_documents_batchUpdate"), plant=_plant_comment)
