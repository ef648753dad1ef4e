"""Mail family, Gmail settings: a filter for future mail from someone (users.settings.filters) and an out-of-office
reply (users.settings.updateVacation)."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.mail_support import label_id, labels_changed_elsewhere, text_mentions
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import LABELS
from env0_posttrain.tasks.template import Template, register

AWAY = (("Out of office", "I am away and will reply when I am back."),
        ("On vacation", "I'm on vacation with limited access to email."),
        ("Away this week", "I'm travelling; for anything urgent please contact the team."))
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")

F = "mail"


def _reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any,
         tools: tuple[str, ...], distractors: tuple[str, ...], plant: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
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


_reg("mail_filter_sender_to_label",
     ('From now on, mail from {name} should get the "{label}" label and skip my inbox. Set up a filter.',
      'Create a Gmail filter: messages from {email} are labelled {label} and archived (not in the inbox).',
      'Make new emails from {first} go straight to "{label}" instead of my inbox.'),
     _sample_filter, _solve_filter, _judge_filter, ("gmail_labels_list", "gmail_settings_filters_create"),
     ("gmail_settings_filters_list", "gmail_messages_batchModify", "gmail_labels_create"), plant=_plant_filter)


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


_reg("mail_vacation_responder",
     ('Turn on my out-of-office reply from {start_day} to {end_day} next week, subject "{subject}", message: '
      '"{message}". It should go to {who}.',
      'Set a vacation auto-reply for next week {start_day} through {end_day} with the subject "{subject}" and the text '
      '"{message}", sent to {who}.'),
     _sample_vacation, _solve_vacation, _judge_vacation, ("gmail_settings_updateVacation",),
     ("gmail_settings_getVacation", "gmail_settings_updateAutoForwarding", "gmail_drafts_create"))


