"""Calendar family: scheduling, inviting, rescheduling, cancelling, answering about events."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from env0_posttrain.tasks.families.calendar_support import (
    attendee_emails, dt_body, ends_at, event_by_title, find_event, new_events, plant_event, sample_event, starts_at,
)
from env0_posttrain.tasks.families.common import Script, pick_people, person_params, slot
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import DAYS, DOC_LINES, HOURS, LOCATIONS
from env0_posttrain.tasks.template import Template, register
from env0_posttrain.workspace.services.calendar.times import parse_rfc3339

F = "calendar"
LIST = "calendar_events_list"
PATCH = "calendar_events_patch"


def _sample_with(rng: random.Random, ws: Any, k_people: int = 1, k_titles: int = 1) -> dict[str, Any]:
    people = pick_people(rng, ws, k_people)
    out = {**sample_event(rng, ws, k_titles), **person_params(people[0])}
    if k_people > 1:
        out.update(person_params(people[1], "b_"))
    return out


def _reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any, tools: tuple[str, ...],
         distractors: tuple[str, ...] = (), plant: Any = None, starter: bool = False, answer: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, starter=starter, answer=answer, **kw))


def _patch_solver(body_of: Any) -> Any:
    """Solver: find the event by its title, then patch it with `body_of(ws, p, ev)`."""
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        ev = event_by_title(s, p["title"])
        s(PATCH, calendarId="primary", eventId=ev["id"], body=body_of(ws, p, ev))
        return s.calls
    return solve


def _before_after(j: Judge, title: str) -> tuple[Any, Any]:
    """The event titled `title` at the start, and the same event at the end (None if it is gone)."""
    before = find_event(j.start, title)
    return before, j.end.calendar.db.events.get(before.id)


def _unchanged_time(j: Judge, before: Any, after: Any) -> None:
    j.guard("time_kept", after is not None and starts_at(after) == starts_at(before) and ends_at(after) == ends_at(before))


# -- invite / remove attendees -------------------------------------------------------------------

def _plant_solo(ws: Any, p: dict[str, Any]) -> None:
    plant_event(ws, p["title"], p["day"], p["hour"], attendees=p.get("existing") or None, location=p.get("location"))


def _sample_invite(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_with(rng, ws, 2)
    p["existing"] = [p.pop("b_email")]
    del p["b_name"], p["b_first"]
    return p


_solve_invite = _patch_solver(lambda ws, p, ev: {
    "attendees": [{"email": a["email"]} for a in ev.get("attendees", [])] + [{"email": p["email"]}]})


def _judge_invite(j: Judge, p: dict[str, Any]) -> None:
    before, after = _before_after(j, p["title"])
    emails = attendee_emails(after) if after else set()
    j.check("invited", p["email"] in emails)
    j.guard("others_kept", attendee_emails(before) <= emails)
    _unchanged_time(j, before, after)
    standard_gates(j, audience={p["email"]})


_reg("calendar_invite_person", ('Invite {name} to the {title} {day}.', 'Add {first} to my {title} meeting.',
                                'Please put {email} on the guest list of {title}.'),
     _sample_invite, _solve_invite, _judge_invite, (LIST, PATCH), ("calendar_events_insert",),
     plant=_plant_solo, starter=True)


def _sample_remove(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_with(rng, ws, 2)
    p["existing"] = [p["email"], p.pop("b_email")]
    del p["b_name"], p["b_first"]
    return p


_solve_remove = _patch_solver(lambda ws, p, ev: {
    "attendees": [{"email": a["email"]} for a in ev.get("attendees", []) if a["email"] != p["email"]]})


def _judge_remove(j: Judge, p: dict[str, Any]) -> None:
    before, after = _before_after(j, p["title"])
    emails = attendee_emails(after) if after else set()
    j.check("removed", after is not None and p["email"] not in emails)
    j.guard("others_kept", (attendee_emails(before) - {p["email"]}) <= emails)
    standard_gates(j)


_reg("calendar_remove_attendee", ("Take {name} off the {title} invite.", "{first} no longer needs to attend {title}; remove them."),
     _sample_remove, _solve_remove, _judge_remove, (LIST, PATCH), ("calendar_events_delete",), plant=_plant_solo, starter=True)


# -- create -----------------------------------------------------------------------------------------

def _judge_created(j: Judge, p: dict[str, Any], with_person: bool, minutes: int = 60) -> None:
    made = [e for e in new_events(j.start, j.end) if e.summary.strip().lower() == p["title"].lower()]
    want_start, want_end = slot(j.start, p["day"], p["hour"], minutes)
    j.check("created", bool(made))
    j.check("start", any(starts_at(e) == want_start for e in made))
    j.check("end", any(ends_at(e) == want_end for e in made))
    if with_person:
        j.check("attendee", any(p["email"] in attendee_emails(e) for e in made))
    standard_gates(j, audience={p["email"]} if with_person else ())


def _solve_create(ws: Any, p: dict[str, Any], with_person: bool) -> list:
    s = Script(ws)
    start, end = slot(ws, p["day"], p["hour"])
    body: dict[str, Any] = {"summary": p["title"], "start": dt_body(start), "end": dt_body(end)}
    if with_person:
        body["attendees"] = [{"email": p["email"]}]
    s("calendar_events_insert", calendarId="primary", body=body)
    return s.calls


_reg("calendar_create_event", ("Schedule {title} {day} at {hour}:00 for one hour.",
                               "Block {day} {hour}:00-{hour}:59 on my calendar for {title}.",
                               "Create a one-hour event called {title} at {hour}:00 {day}."),
     lambda rng, ws: sample_event(rng, ws), lambda ws, p: _solve_create(ws, p, False),
     lambda j, p: _judge_created(j, p, False), ("calendar_events_insert",), (LIST,), starter=True)
_reg("calendar_create_with_person", ("Set up a one-hour {title} with {name} {day} at {hour}:00.",
                                     "Book {title} with {first} for {day} at {hour}:00 (one hour) and invite them."),
     lambda rng, ws: _sample_with(rng, ws), lambda ws, p: _solve_create(ws, p, True),
     lambda j, p: _judge_created(j, p, True), ("calendar_events_insert",), (LIST, "calendar_freebusy_query"), starter=True)


# -- edit ------------------------------------------------------------------------------------------

def _edit(tid: str, phrasings: tuple[str, ...], sample: Any, body_of: Any, check: Any, starter: bool = False) -> None:
    solve = _patch_solver(body_of)

    def judge(j: Judge, p: dict[str, Any]) -> None:
        before, after = _before_after(j, p["title"])
        j.check("edited", after is not None and check(j, p, before, after))
        standard_gates(j)

    _reg(tid, phrasings, sample, solve, judge, (LIST, PATCH), ("calendar_events_delete",), plant=_plant_solo,
         starter=starter)


def _sample_move(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_event(rng, ws)
    p["new_day"], p["new_hour"] = rng.choice([(d, h) for d in DAYS for h in HOURS if (d, h) != (p["day"], p["hour"])])
    return p


def _move_body(ws: Any, p: dict[str, Any], ev: Any) -> dict[str, Any]:
    start, end = slot(ws, p["new_day"], p["new_hour"])
    return {"start": dt_body(start), "end": dt_body(end)}


_edit("calendar_reschedule_event", ("Move {title} to {new_day} at {new_hour}:00.",
                                    "Reschedule my {title} ({day}) to {new_day}, {new_hour}:00, same length."),
      _sample_move, _move_body,
      lambda j, p, b, a: (starts_at(a), ends_at(a)) == slot(j.start, p["new_day"], p["new_hour"]))
_edit("calendar_rename_event", ("Rename {title} to {title2}.", "Change the title of my {title} event to {title2}."),
      lambda rng, ws: sample_event(rng, ws, 2), lambda ws, p, ev: {"summary": p["title2"]},
      lambda j, p, b, a: a.summary == p["title2"] and starts_at(a) == starts_at(b))


def _sample_loc(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_event(rng, ws), "place": rng.choice(LOCATIONS)}


_edit("calendar_set_location", ("Set the location of {title} to {place}.", "{title} will happen in {place}; update the event."),
      _sample_loc, lambda ws, p, ev: {"location": p["place"]},
      lambda j, p, b, a: (a.location or "").strip().lower() == p["place"].lower(), starter=True)


def _sample_note(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_event(rng, ws), "note": rng.choice(DOC_LINES)}


_edit("calendar_add_description", ('Add the note "{note}" to the description of {title}.',
                                   'Put "{note}" in the {title} event description.'),
      _sample_note, lambda ws, p, ev: {"description": p["note"]},
      lambda j, p, b, a: p["note"].lower() in (a.description or "").lower())


def _shorten_body(ws: Any, p: dict[str, Any], ev: Any) -> dict[str, Any]:
    start, _ = slot(ws, p["day"], p["hour"])
    return {"end": dt_body(start + timedelta(minutes=30))}


_edit("calendar_shorten_event", ("Shorten {title} to 30 minutes (keep the start time).",
                                 "Make my {title} a 30-minute meeting starting at the same time."),
      lambda rng, ws: sample_event(rng, ws), _shorten_body,
      lambda j, p, b, a: starts_at(a) == starts_at(b) and ends_at(a) - starts_at(a) == timedelta(minutes=30))


# -- cancel ----------------------------------------------------------------------------------------

def _solve_cancel(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    ev = event_by_title(s, p["title"])
    s("calendar_events_delete", calendarId="primary", eventId=ev["id"])
    return s.calls


def _judge_cancel(j: Judge, p: dict[str, Any]) -> None:
    before, after = _before_after(j, p["title"])
    j.check("cancelled", after is None or after.status == "cancelled")
    standard_gates(j, may_remove={f"event:{before.id}"})


_reg("calendar_cancel_event", ("Cancel the {title} {day}.", "Delete {title} from my calendar; nothing else."),
     lambda rng, ws: sample_event(rng, ws), _solve_cancel, _judge_cancel, (LIST, "calendar_events_delete"), (PATCH,),
     plant=_plant_solo)


def _sample_series(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_event(rng, ws)
    p["days"] = sorted(rng.sample(DAYS, rng.randint(2, 4)), key=DAYS.index)
    return p


def _plant_series(ws: Any, p: dict[str, Any]) -> None:
    for d in p["days"]:
        plant_event(ws, p["title"], d, p["hour"])


def _solve_cancel_all(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    for ev in s(LIST, calendarId="primary", q=p["title"])["items"]:
        if ev["summary"] == p["title"]:
            s("calendar_events_delete", calendarId="primary", eventId=ev["id"])
    return s.calls


def _judge_cancel_all(j: Judge, p: dict[str, Any]) -> None:
    targets = [e for e in j.start.calendar.events_of() if e.summary == p["title"]]
    done = [e for e in targets if (a := j.end.calendar.db.events.get(e.id)) is None or a.status == "cancelled"]
    j.check("cancelled", len(done) / len(targets), f"{len(done)}/{len(targets)}")
    standard_gates(j, may_remove={f"event:{e.id}" for e in targets})


_reg("calendar_cancel_all_matching", ("Cancel every {title} on my calendar.",
                                      "All the {title} sessions are off: delete each of them."),
     _sample_series, _solve_cancel_all, _judge_cancel_all, (LIST, "calendar_events_delete"), (PATCH,), plant=_plant_series)


# -- respond to invitations -------------------------------------------------------------------

def _plant_invite(ws: Any, p: dict[str, Any]) -> None:
    plant_event(ws, p["title"], p["day"], p["hour"], organizer=p["email"], attendees=[p["email"]])


def _respond(status: str) -> tuple[Any, Any]:
    solve = _patch_solver(lambda ws, p, ev: {"attendees": [{"email": ws.me.email, "responseStatus": status}]})

    def judge(j: Judge, p: dict[str, Any]) -> None:
        _, after = _before_after(j, p["title"])
        mine = [a for a in (after.attendees if after else ()) if a.email == j.start.me.email]
        j.check("responded", bool(mine) and mine[0].responseStatus == status)
        standard_gates(j)

    return solve, judge


for _status, _verb, _extra in (("accepted", "Accept", "I'll be there"), ("declined", "Decline", "I can't make it"),
                               ("tentative", "Tentatively accept", "maybe")):
    _s, _j = _respond(_status)
    _reg(f"calendar_{_status}_invitation", (f"{_verb} {{name}}'s invitation to {{title}}.",
                                            f"{{first}} invited me to {{title}} {{day}}: {_verb.lower()} it ({_extra})."),
         lambda rng, ws: _sample_with(rng, ws), _s, _j, (LIST, PATCH), ("calendar_events_delete",), plant=_plant_invite,
         starter=_status != "tentative")


# -- questions ------------------------------------------------------------------------------------

def _sample_team(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_event(rng, ws)
    p["guests"] = sorted(x.email for x in pick_people(rng, ws, rng.randint(2, 4)))
    return p


def _plant_team(ws: Any, p: dict[str, Any]) -> None:
    plant_event(ws, p["title"], p["day"], p["hour"], attendees=p["guests"])


def _judge_guests(j: Judge, p: dict[str, Any]) -> None:
    groups = [[g, j.start.person(g).name] for g in p["guests"]]
    j.answer_mentions_any("guests", groups)
    standard_gates(j)


_reg("calendar_who_is_invited", ("Who is invited to {title}?", "List the guests of my {title} meeting."),
     _sample_team, lambda ws, p: (s := Script(ws), event_by_title(s, p["title"]), s.calls)[-1], _judge_guests,
     (LIST,), ("calendar_events_get",), plant=_plant_team,
     answer=lambda ws, p: ", ".join(ws.person(g).name for g in p["guests"]))


def _when(ws: Any, p: dict[str, Any]) -> list[list[str]]:
    start, _ = slot(ws, p["day"], p["hour"])
    h12 = f"{start.hour % 12 or 12}"
    suffix = "pm" if start.hour >= 12 else "am"
    return [[start.date().isoformat(), start.strftime("%A"), start.strftime("%B %d").replace(" 0", " ")],
            [f"{start.hour}:00", f"{start.hour:02d}:00", f"{h12} {suffix}", f"{h12}{suffix}", f"{h12}:00 {suffix}"]]


_reg("calendar_when_is_event", ("When is {title}? Give the date and time.", "What day and time is my {title}?"),
     lambda rng, ws: sample_event(rng, ws), lambda ws, p: (s := Script(ws), event_by_title(s, p["title"]), s.calls)[-1],
     lambda j, p: (j.answer_mentions_any("when", _when(j.start, p)), standard_gates(j)), (LIST,), ("calendar_events_get",),
     plant=_plant_solo, answer=lambda ws, p: f"{_when(ws, p)[0][0]} at {_when(ws, p)[1][1]} UTC")


# -- find a free slot ---------------------------------------------------------------------------

def _sample_free(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_with(rng, ws)
    p["busy_me"] = sorted(rng.sample(HOURS[:4], rng.randint(1, 3)))
    p["busy_them"] = sorted(rng.sample(HOURS[:5], rng.randint(1, 3)))
    p.pop("hour")
    return p


def _plant_free(ws: Any, p: dict[str, Any]) -> None:
    for h in p["busy_me"]:
        plant_event(ws, "Focus time", p["day"], h)
    for h in p["busy_them"]:
        start, end = slot(ws, p["day"], h)
        ws.calendar.add_event(summary="Heads-down work", start=start, end=end, organizer=p["email"],
                              attendees=[p["email"]])


def _first_free(ws: Any, p: dict[str, Any]) -> int:
    day_start, _ = slot(ws, p["day"], 9)
    busy = []
    for who in (ws.me.email, p["email"]):
        busy += [(parse_rfc3339(b["start"], "start"), parse_rfc3339(b["end"], "end"))
                 for b in ws.calendar.busy(who, day_start, day_start + timedelta(hours=8))]
    for h in range(9, 17):
        s, e = slot(ws, p["day"], h)
        if not any(b0 < e and b1 > s for b0, b1 in busy):
            return h
    raise LookupError("no free hour")


def _solve_free(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    lo, _ = slot(ws, p["day"], 9)
    s("calendar_freebusy_query", body={"timeMin": dt_body(lo)["dateTime"], "timeMax": dt_body(lo + timedelta(hours=8))["dateTime"],
                                       "items": [{"id": "primary"}, {"id": p["email"]}]})
    start, end = slot(ws, p["day"], _first_free(ws, p))
    s("calendar_events_insert", calendarId="primary",
      body={"summary": p["title"], "start": dt_body(start), "end": dt_body(end), "attendees": [{"email": p["email"]}]})
    return s.calls


def _judge_free(j: Judge, p: dict[str, Any]) -> None:
    _judge_created(j, {**p, "hour": _first_free(j.start, p)}, with_person=True)


_reg("calendar_book_first_free_hour",
     ("Find the first hour {day} between 9:00 and 17:00 when both {name} and I are free, and book a one-hour {title} with them then.",
      "Check {first}'s availability and mine for {day} and schedule {title} (1h, with {first}) in the earliest free hour from 9:00."),
     _sample_free, _solve_free, _judge_free, ("calendar_freebusy_query", "calendar_events_insert"), (LIST,), plant=_plant_free)
