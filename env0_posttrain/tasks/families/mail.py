"""Mail family: triage, labelling, sending, replying, forwarding and questions about the inbox."""

from __future__ import annotations

import base64
import random
from datetime import timedelta
from typing import Any

from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.mail_support import (
    find_mail, from_person, label_id, labels_changed_elsewhere, new_drafts, new_sent, plant_mail,
    query_for, recipients_of, sample_mail, text_mentions,
)
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import BODIES, LABELS, NOTE_SUBJECTS, PHRASES, SUBJECTS
from env0_posttrain.tasks.template import Template, register

F = "mail"
READ = ("gmail_messages_list", "gmail_messages_get")


def _plant_one(ws: Any, p: dict[str, Any]) -> None:
    plant_mail(ws, p["email"], p["subject"], unread=p.get("unread", True))


# -- one message, one label change ------------------------------------------------------------

def _label_change(tid: str, phrasings: tuple[str, ...], add: list[str], remove: list[str], starter: bool) -> None:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        mid = s("gmail_messages_list", q=query_for(p["email"], p["subject"]))["messages"][0]["id"]
        s("gmail_messages_modify", id=mid, body={"addLabelIds": add, "removeLabelIds": remove})
        return s.calls

    def judge(j: Judge, p: dict[str, Any]) -> None:
        target = find_mail(j.start, p["email"], p["subject"])
        after = j.end.gmail.db.messages.get(target.id)
        labels = set(after.labelIds) if after else set()
        if add:
            j.check("labels_added", all(l in labels for l in add), f"target labels {sorted(labels)}")
        if remove:
            j.check("labels_removed", not any(l in labels for l in remove), f"target labels {sorted(labels)}")
        j.guard("others_untouched", not labels_changed_elsewhere(j.start, j.end, {target.id}))
        standard_gates(j)

    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample_mail, plant=_plant_one, solve=solve,
                      judge=judge, tools=("gmail_messages_list", "gmail_messages_modify"),
                      distractors=("gmail_messages_get", "gmail_messages_trash"), starter=starter))


_label_change("mail_star_from_person", (
    'Star the email from {name} about "{subject}".',
    'Please star {first}\'s message "{subject}".',
    'Add a star to the "{subject}" email that {name} sent me.',
), ["STARRED"], [], starter=True)
_label_change("mail_mark_read_from_person", (
    'Mark the email from {name} about "{subject}" as read.',
    'I have read {first}\'s "{subject}" message; mark it read.',
), [], ["UNREAD"], starter=True)
_label_change("mail_archive_from_person", (
    'Archive the email from {name} about "{subject}".',
    'Take {first}\'s "{subject}" email out of my inbox (archive it, do not delete it).',
), [], ["INBOX"], starter=True)
_label_change("mail_important_from_person", (
    'Mark the email from {name} about "{subject}" as important.',
    'Flag {first}\'s "{subject}" message as important.',
), ["IMPORTANT"], [], starter=True)


# -- user labels --------------------------------------------------------------------------------

def _sample_label(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_mail(rng, ws), "label": rng.choice(LABELS)}


def _plant_label(ws: Any, p: dict[str, Any]) -> None:
    if label_id(ws, p["label"]) is None:
        ws.gmail.add_label(p["label"])
    _plant_one(ws, p)


def _solve_label(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    labels = s("gmail_labels_list")["labels"]
    lid = next(l["id"] for l in labels if l["name"] == p["label"])
    mid = s("gmail_messages_list", q=query_for(p["email"], p["subject"]))["messages"][0]["id"]
    s("gmail_messages_modify", id=mid, body={"addLabelIds": [lid]})
    return s.calls


def _judge_label(j: Judge, p: dict[str, Any]) -> None:
    target = find_mail(j.start, p["email"], p["subject"])
    lid = label_id(j.end, p["label"])
    after = j.end.gmail.db.messages.get(target.id)
    j.check("label_applied", bool(lid and after and lid in after.labelIds))
    j.guard("others_untouched", not labels_changed_elsewhere(j.start, j.end, {target.id}))
    standard_gates(j)


register(Template(
    id="mail_label_from_person", family=F, sample=_sample_label, plant=_plant_label, solve=_solve_label,
    judge=_judge_label, tools=("gmail_labels_list", "gmail_messages_list", "gmail_messages_modify"),
    distractors=("gmail_labels_create",),
    phrasings=('Label the email from {name} about "{subject}" as {label}.',
               'File {first}\'s "{subject}" message under the {label} label.',
               'Put the {label} label on the "{subject}" email from {name}.'),
))


def _solve_create_label(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    lid = s("gmail_labels_create", body={"name": p["label"]})["id"]
    mid = s("gmail_messages_list", q=query_for(p["email"], p["subject"]))["messages"][0]["id"]
    s("gmail_messages_modify", id=mid, body={"addLabelIds": [lid]})
    return s.calls


def _sample_new_label(rng: random.Random, ws: Any) -> dict[str, Any]:
    free = [l for l in LABELS if label_id(ws, l) is None]
    return {**sample_mail(rng, ws), "label": rng.choice(free)}


register(Template(
    id="mail_create_label_and_apply", family=F, sample=_sample_new_label, plant=_plant_one, solve=_solve_create_label,
    judge=_judge_label, tools=("gmail_labels_create", "gmail_messages_list", "gmail_messages_modify"),
    distractors=("gmail_labels_list",),
    phrasings=('Create a label called {label} and apply it to the email from {name} about "{subject}".',
               'I need a new {label} label; make it and put {first}\'s "{subject}" message in it.'),
))


def _sample_many(rng: random.Random, ws: Any) -> dict[str, Any]:
    (p,) = pick_people(rng, ws)
    k = rng.randint(2, 4)
    return {**person_params(p), "subjects": sorted(rng.sample(SUBJECTS, k)), "label": rng.choice(LABELS)}


def _plant_many(ws: Any, p: dict[str, Any]) -> None:
    if label_id(ws, p["label"]) is None:
        ws.gmail.add_label(p["label"])
    for i, subject in enumerate(p["subjects"]):
        plant_mail(ws, p["email"], subject, hours=2 + 3 * i)


def _solve_label_all(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    lid = next(l["id"] for l in s("gmail_labels_list")["labels"] if l["name"] == p["label"])
    for m in s("gmail_messages_list", q=f"from:{p['email']}").get("messages", []):
        s("gmail_messages_modify", id=m["id"], body={"addLabelIds": [lid]})
    return s.calls


def _judge_label_all(j: Judge, p: dict[str, Any]) -> None:
    lid = label_id(j.end, p["label"])
    targets = from_person(j.start, p["email"])
    done = [m for m in targets if lid and lid in j.end.gmail.db.messages[m.id].labelIds]
    j.check("labelled", len(done) / len(targets), f"{len(done)}/{len(targets)} labelled")
    j.guard("others_untouched", not labels_changed_elsewhere(j.start, j.end, {m.id for m in targets}))
    standard_gates(j)


register(Template(
    id="mail_label_all_from_person", family=F, sample=_sample_many, plant=_plant_many, solve=_solve_label_all,
    judge=_judge_label_all, tools=("gmail_labels_list", "gmail_messages_list", "gmail_messages_modify"),
    distractors=("gmail_messages_get",),
    phrasings=("Apply the {label} label to every email from {name}.",
               "Everything {first} has sent me should carry the {label} label.",
               "Go through my inbox and label all of {name}'s emails {label}."),
))


def _bulk(tid: str, phrasings: tuple[str, ...], q_extra: str, add: list[str], remove: list[str], trash: bool) -> None:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        for m in s("gmail_messages_list", q=f"from:{p['email']}{q_extra}").get("messages", []):
            if trash:
                s("gmail_messages_trash", id=m["id"])
            else:
                s("gmail_messages_modify", id=m["id"], body={"addLabelIds": add, "removeLabelIds": remove})
        return s.calls

    def judge(j: Judge, p: dict[str, Any]) -> None:
        targets = [m for m in from_person(j.start, p["email"]) if not q_extra or "UNREAD" in m.labelIds]
        ends = [j.end.gmail.db.messages.get(m.id) for m in targets]
        if trash:
            ok = [e for e in ends if e is None or "TRASH" in e.labelIds]
        else:
            ok = [e for e in ends if e and all(l in e.labelIds for l in add) and not set(remove) & set(e.labelIds)]
        j.check("all_done", len(ok) / len(targets), f"{len(ok)}/{len(targets)}")
        j.guard("others_untouched", not labels_changed_elsewhere(j.start, j.end, {m.id for m in targets}))
        standard_gates(j, may_remove={f"msg:{m.id}" for m in targets} if trash else ())

    register(Template(id=tid, family=F, phrasings=phrasings, sample=_sample_many, plant=_plant_many, solve=solve,
                      judge=judge, tools=("gmail_messages_list",
                                          "gmail_messages_trash" if trash else "gmail_messages_modify"),
                      distractors=("gmail_messages_get", "gmail_messages_delete")))


_bulk("mail_mark_all_read_from_person", ("Mark every unread email from {name} as read.",
                                         "Clear the unread flag on all of {first}'s messages."),
      " is:unread", [], ["UNREAD"], trash=False)
_bulk("mail_star_all_from_person", ("Star every email {name} has sent me.",
                                    "Add a star to all messages from {first}."), "", ["STARRED"], [], trash=False)
_bulk("mail_trash_all_from_person", ("Move every email from {name} to the trash.",
                                     "Clean out my inbox: trash all of {first}'s emails, nothing else."),
      "", [], [], trash=True)


# -- trash one ------------------------------------------------------------------------------------

def _solve_trash(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    mid = s("gmail_messages_list", q=query_for(p["email"], p["subject"]))["messages"][0]["id"]
    s("gmail_messages_trash", id=mid)
    return s.calls


def _judge_trash(j: Judge, p: dict[str, Any]) -> None:
    target = find_mail(j.start, p["email"], p["subject"])
    after = j.end.gmail.db.messages.get(target.id)
    j.check("trashed", after is None or "TRASH" in after.labelIds)
    standard_gates(j, may_remove={f"msg:{target.id}"})


register(Template(
    id="mail_trash_from_person", family=F, sample=sample_mail, plant=_plant_one, solve=_solve_trash,
    judge=_judge_trash, tools=("gmail_messages_list", "gmail_messages_trash"),
    distractors=("gmail_messages_delete", "gmail_messages_modify"),
    phrasings=('Delete the email from {name} about "{subject}".',
               'Trash {first}\'s "{subject}" message; keep everything else.'),
))


# -- writing --------------------------------------------------------------------------------------

def _sample_note(rng: random.Random, ws: Any) -> dict[str, Any]:
    (p,) = pick_people(rng, ws)
    return {**person_params(p), "note_subject": rng.choice(NOTE_SUBJECTS), "phrase": rng.choice(PHRASES)}


def _judge_note(j: Judge, p: dict[str, Any], drafts: bool = False) -> None:
    made = new_drafts(j.start, j.end) if drafts else new_sent(j.start, j.end)
    to_them = [m for m in made if p["email"] in recipients_of(m)]
    j.check("addressed", bool(to_them))
    j.check("subject", any(m.subject.strip().lower() == p["note_subject"].lower() for m in to_them))
    j.check("body", any(text_mentions(m.body, p["phrase"]) for m in to_them))
    if drafts:
        j.guard("not_sent", not new_sent(j.start, j.end))
    standard_gates(j, audience=() if drafts else {p["email"]})


def _solve_note(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("gmail_messages_send", to=p["email"], subject=p["note_subject"], body_text=p["phrase"])
    return s.calls


def _solve_draft(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("gmail_drafts_create", to=p["email"], subject=p["note_subject"], body_text=p["phrase"])
    return s.calls


register(Template(
    id="mail_send_note", family=F, sample=_sample_note, solve=_solve_note, judge=_judge_note, starter=True,
    tools=("gmail_messages_send",), distractors=("gmail_drafts_create", "gmail_messages_list"),
    phrasings=('Email {name} with the subject "{note_subject}" and the message "{phrase}".',
               'Send {first} an email titled "{note_subject}" that says: {phrase}.',
               'Write to {email}: subject "{note_subject}", body "{phrase}".'),
))
register(Template(
    id="mail_draft_note", family=F, sample=_sample_note, solve=_solve_draft,
    judge=lambda j, p: _judge_note(j, p, drafts=True), starter=True,
    tools=("gmail_drafts_create",), distractors=("gmail_messages_send",),
    phrasings=('Draft (do not send) an email to {name} with the subject "{note_subject}" saying "{phrase}".',
               'Prepare a draft for {first}: "{note_subject}" / "{phrase}". I will send it myself.'),
))


def _sample_reply(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_mail(rng, ws), "phrase": rng.choice(PHRASES)}


def _solve_reply(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    m = s("gmail_messages_list", q=query_for(p["email"], p["subject"]))["messages"][0]
    s("gmail_messages_send", to=p["email"], subject=f"Re: {p['subject']}", body_text=p["phrase"], threadId=m["threadId"])
    return s.calls


def _judge_reply(j: Judge, p: dict[str, Any]) -> None:
    target = find_mail(j.start, p["email"], p["subject"])
    replies = [m for m in new_sent(j.start, j.end) if p["email"] in recipients_of(m)]
    j.check("replied", bool(replies))
    j.check("in_thread", any(m.threadId == target.threadId for m in replies))
    j.check("body", any(text_mentions(m.body, p["phrase"]) for m in replies))
    standard_gates(j, audience={p["email"]})


register(Template(
    id="mail_reply_to_person", family=F, sample=_sample_reply, plant=_plant_one, solve=_solve_reply,
    judge=_judge_reply, tools=("gmail_messages_list", "gmail_messages_send"), distractors=("gmail_messages_get",),
    phrasings=('Reply to {name}\'s email about "{subject}" with: {phrase}.',
               'Answer {first}\'s "{subject}" message in the same thread, saying "{phrase}".'),
))


def _sample_forward(rng: random.Random, ws: Any) -> dict[str, Any]:
    a, b = pick_people(rng, ws, 2)
    return {**person_params(a), **person_params(b, "to_"), "subject": rng.choice(SUBJECTS)}


def _solve_forward(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    mid = s("gmail_messages_list", q=query_for(p["email"], p["subject"]))["messages"][0]["id"]
    msg = s("gmail_messages_get", id=mid)
    data = msg["payload"].get("body", {}).get("data") or next(
        part["body"]["data"] for part in msg["payload"].get("parts", []) if part.get("mimeType") == "text/plain")
    text = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode()
    s("gmail_messages_send", to=p["to_email"], subject=f"Fwd: {p['subject']}", body_text=text)
    return s.calls


def _judge_forward(j: Judge, p: dict[str, Any]) -> None:
    sent = [m for m in new_sent(j.start, j.end) if p["to_email"] in recipients_of(m)]
    j.check("forwarded", bool(sent))
    j.check("content", any(text_mentions(m.body, BODIES[p["subject"]]) for m in sent))
    standard_gates(j, audience={p["to_email"]})


register(Template(
    id="mail_forward_to_person", family=F, sample=_sample_forward, plant=_plant_one, solve=_solve_forward,
    judge=_judge_forward, tools=("gmail_messages_list", "gmail_messages_get", "gmail_messages_send"),
    distractors=("gmail_drafts_create",),
    phrasings=('Forward the email from {name} about "{subject}" to {to_name}.',
               '{to_first} needs to see {first}\'s "{subject}" message: forward it to them (include its text).'),
))


# -- questions ------------------------------------------------------------------------------------

def _sample_count(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_many(rng, ws)
    p["read"] = rng.randint(0, len(p["subjects"]) - 1)
    del p["label"]
    return p


def _plant_count(ws: Any, p: dict[str, Any]) -> None:
    for i, subject in enumerate(p["subjects"]):
        plant_mail(ws, p["email"], subject, hours=2 + 3 * i, unread=i >= p["read"])


def _unread_count(ws: Any, p: dict[str, Any]) -> str:
    return str(sum("UNREAD" in m.labelIds for m in from_person(ws, p["email"])))


def _solve_count(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("gmail_messages_list", q=f"from:{p['email']} is:unread")
    return s.calls


register(Template(
    id="mail_count_unread_from_person", family=F, sample=_sample_count, plant=_plant_count, solve=_solve_count,
    answer=_unread_count, tools=("gmail_messages_list",), distractors=("gmail_messages_get", "gmail_messages_modify"),
    judge=lambda j, p: (j.answer_mentions("count", [_unread_count(j.start, p)]), standard_gates(j)),
    phrasings=("How many unread emails from {name} do I have? Answer with the number.",
               "Count {first}'s unread messages in my mailbox and tell me the number."),
))


def _latest_subject(ws: Any, p: dict[str, Any]) -> str:
    return from_person(ws, p["email"])[0].subject


def _solve_latest(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    mid = s("gmail_messages_list", q=f"from:{p['email']}", maxResults=1)["messages"][0]["id"]
    s("gmail_messages_get", id=mid, format="metadata")
    return s.calls


register(Template(
    id="mail_latest_subject_from_person", family=F, sample=_sample_count, plant=_plant_count, solve=_solve_latest,
    answer=_latest_subject, tools=("gmail_messages_list", "gmail_messages_get"), distractors=("gmail_labels_list",),
    judge=lambda j, p: (j.answer_mentions("subject", [_latest_subject(j.start, p)]), standard_gates(j)),
    phrasings=("What is the subject of the most recent email from {name}?",
               "Tell me the subject line of {first}'s latest message."),
))


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


register(Template(
    id="mail_archive_thread_read", family=F, sample=sample_mail, plant=_plant_thread, solve=_solve_thread,
    judge=_judge_thread, tools=("gmail_messages_list", "gmail_threads_modify"),
    distractors=("gmail_threads_trash", "gmail_messages_modify", "gmail_threads_get"),
    phrasings=('Archive the whole "{subject}" conversation with {name} and mark all of it as read.',
               'Clear the "{subject}" thread from {first} out of my inbox (every message in it), marked read.',
               'I am done with the {subject} thread ({email}): mark it read and archive it, all messages.'),
))
