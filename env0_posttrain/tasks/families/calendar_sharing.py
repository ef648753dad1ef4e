"""Calendar family, sharing and organising: ACL rules (share, unshare) and secondary calendars
(create one, move an event into it). These need calendar_acl_* and calendar_calendars_* tools."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.calendar_support import ends_at, event_by_title, find_event, plant_event, sample_event, starts_at
from env0_posttrain.tasks.families.common import Script, others, pick_people, person_params
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.template import Template, register

F = "calendar"
CALENDAR_NAMES = ("Hiring", "Team Offsites", "Conferences", "Side Projects", "Vendor Meetings", "Training",
                  "Customer Visits", "Board Prep", "Travel", "Release Planning")
ROLE_WORDS = {"reader": ("see my event details", "view my calendar"),
              "writer": ("edit my events", "make changes to my calendar")}


def _reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any, tools: tuple[str, ...],
         distractors: tuple[str, ...], plant: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, **kw))


def _rule(ws: Any, calendar_id: str, email: str) -> Any:
    return ws.calendar.db.acl.get(f"{calendar_id}/user:{email}")


def _other_rules_kept(j: Judge, calendar_id: str, email: str) -> None:
    """Every rule but the task's own is as it was."""
    def rest(ws: Any) -> dict[str, Any]:
        return {k: r for k, r in ws.calendar.db.acl.items() if k != f"{calendar_id}/user:{email}"}
    j.guard("other_shares_kept", rest(j.start) == rest(j.end))


# -- share my calendar ------------------------------------------------------------------------------------

def _sample_share(rng: random.Random, ws: Any) -> dict[str, Any]:
    role = rng.choice(sorted(ROLE_WORDS))
    unshared = [p for p in others(ws) if _rule(ws, ws.me.email, p.email) is None]  # a no-op must not pass
    return {**person_params(rng.choice(unshared)), "role": role, "can": rng.choice(ROLE_WORDS[role])}


def _plant_share(ws: Any, p: dict[str, Any]) -> None:
    other = next(x for x in others(ws) if x.email != p["email"] and _rule(ws, ws.me.email, x.email) is None)
    ws.calendar.add_acl(ws.me.email, role="freeBusyReader", value=other.email)  # an existing share to keep


def _solve_share(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("calendar_acl_insert", calendarId="primary",
      body={"role": p["role"], "scope": {"type": "user", "value": p["email"]}})
    return s.calls


def _judge_share(j: Judge, p: dict[str, Any]) -> None:
    rule = _rule(j.end, j.end.me.email, p["email"])
    j.check("shared", rule is not None and rule.role == p["role"],
            f"rule {rule.role if rule else None}, wanted {p['role']}")
    _other_rules_kept(j, j.end.me.email, p["email"])
    standard_gates(j, audience={p["email"]})


_reg("calendar_share_with_person",
     ("Share my calendar with {name} so they can {can}.", "Give {first} access to {can}.",
      "Let {email} {can} (share my primary calendar)."),
     _sample_share, _solve_share, _judge_share, ("calendar_acl_insert",), ("calendar_acl_list", "calendar_calendarList_list"),
     plant=_plant_share)


# -- stop sharing --------------------------------------------------------------------------------------------

def _sample_unshare(rng: random.Random, ws: Any) -> dict[str, Any]:
    a, b = pick_people(rng, ws, 2)
    return {**person_params(a), "keep_email": b.email, "role": rng.choice(["reader", "writer"])}


def _plant_unshare(ws: Any, p: dict[str, Any]) -> None:
    ws.calendar.add_acl(ws.me.email, role=p["role"], value=p["email"])
    ws.calendar.add_acl(ws.me.email, role="reader", value=p["keep_email"])


def _solve_unshare(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    rules = s("calendar_acl_list", calendarId="primary")["items"]
    rule = next(r for r in rules if r["scope"].get("value") == p["email"])
    s("calendar_acl_delete", calendarId="primary", ruleId=rule["id"])
    return s.calls


def _judge_unshare(j: Judge, p: dict[str, Any]) -> None:
    me = j.end.me.email
    rule = _rule(j.end, me, p["email"])
    j.check("unshared", rule is None or rule.role in ("none", "freeBusyReader"))
    _other_rules_kept(j, me, p["email"])
    standard_gates(j, may_remove={f"acl:{me}/user:{p['email']}"})


_reg("calendar_unshare_person",
     ("Stop sharing my calendar with {name}.", "{first} should no longer have access to my calendar; remove it.",
      "Revoke {email}'s access to my calendar."),
     _sample_unshare, _solve_unshare, _judge_unshare, ("calendar_acl_list", "calendar_acl_delete"),
     ("calendar_acl_insert", "calendar_calendarList_delete"), plant=_plant_unshare)


# -- new calendar, move an event into it ------------------------------------------------------------------------

def _sample_move_cal(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_event(rng, ws), "cal_name": rng.choice(CALENDAR_NAMES)}


def _plant_event(ws: Any, p: dict[str, Any]) -> None:
    plant_event(ws, p["title"], p["day"], p["hour"])


def _new_calendar(j: Judge, name: str) -> Any:
    made = [c for cid, c in j.end.calendar.db.calendars.items()
            if cid not in j.start.calendar.db.calendars and c.summary.strip().lower() == name.lower()]
    return made[0] if len(made) == 1 and made[0].owner == j.end.me.email else None


def _solve_move_cal(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    cal = s("calendar_calendars_insert", body={"summary": p["cal_name"]})
    ev = event_by_title(s, p["title"])
    s("calendar_events_move", calendarId="primary", eventId=ev["id"], destination=cal["id"])
    return s.calls


def _judge_move_cal(j: Judge, p: dict[str, Any]) -> None:
    cal = _new_calendar(j, p["cal_name"])
    before = find_event(j.start, p["title"])
    after = j.end.calendar.db.events.get(before.id)
    j.check("calendar_created", cal is not None)
    j.check("event_moved", cal is not None and after is not None and after.calendarId == cal.id
            and after.status != "cancelled")
    j.guard("time_kept", after is not None and (starts_at(after), ends_at(after)) == (starts_at(before), ends_at(before)))
    standard_gates(j)


_reg("calendar_new_calendar_move_event",
     ('Create a new calendar called "{cal_name}" and move my {title} event into it.',
      'Set up a separate "{cal_name}" calendar and put {title} ({day}) on it instead of my main calendar.'),
     _sample_move_cal, _solve_move_cal, _judge_move_cal,
     ("calendar_calendars_insert", "calendar_events_list", "calendar_events_move"),
     ("calendar_events_delete", "calendar_events_insert"), plant=_plant_event)


# -- new shared calendar --------------------------------------------------------------------------------------------

def _sample_team_cal(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**person_params(pick_people(rng, ws)[0]), "cal_name": rng.choice(CALENDAR_NAMES)}


def _solve_team_cal(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    cal = s("calendar_calendars_insert", body={"summary": p["cal_name"]})
    s("calendar_acl_insert", calendarId=cal["id"], body={"role": "writer", "scope": {"type": "user", "value": p["email"]}})
    return s.calls


def _judge_team_cal(j: Judge, p: dict[str, Any]) -> None:
    cal = _new_calendar(j, p["cal_name"])
    rule = _rule(j.end, cal.id, p["email"]) if cal is not None else None
    j.check("calendar_created", cal is not None)
    j.check("editor_added", rule is not None and rule.role == "writer")
    me = j.end.me.email
    j.guard("primary_shares_kept", [r for r in j.start.calendar.db.acl.values() if r.calendarId == me]
            == [r for r in j.end.calendar.db.acl.values() if r.calendarId == me])
    standard_gates(j, audience={p["email"]})


_reg("calendar_create_shared_calendar",
     ('Create a calendar named "{cal_name}" and let {name} edit it.',
      'Make a new "{cal_name}" calendar that {first} can add and change events on.'),
     _sample_team_cal, _solve_team_cal, _judge_team_cal, ("calendar_calendars_insert", "calendar_acl_insert"),
     ("calendar_acl_list", "calendar_calendarList_insert"))
