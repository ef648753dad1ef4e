"""Calendar helpers shared by calendar and multi-app templates."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from env0_posttrain.tasks.families.common import Script, slot
from env0_posttrain.tasks.pools import DAYS, EVENT_TITLES, HOURS
from env0_posttrain.workspace.services.calendar.times import event_time


def free_titles(ws: Any) -> list[str]:
    """Pool titles no event in the company already uses, so an instruction names exactly one event."""
    used = {e.summary.lower() for e in ws.calendar.db.events.values()}
    return [t for t in EVENT_TITLES if t.lower() not in used]


def sample_event(rng: random.Random, ws: Any, k: int = 1) -> dict[str, Any]:
    titles = rng.sample(free_titles(ws), k)
    out: dict[str, Any] = {"title": titles[0], "day": rng.choice(DAYS), "hour": rng.choice(HOURS)}
    if k > 1:
        out["title2"] = titles[1]
    return out


def plant_event(ws: Any, title: str, day: str, hour: int, attendees: list[str] | None = None,
                organizer: str | None = None, minutes: int = 60, **extra: Any) -> Any:
    start, end = slot(ws, day, hour, minutes)
    people = list(attendees or [])
    if organizer and ws.me.email not in people:
        people.append(ws.me.email)
    return ws.calendar.add_event(summary=title, start=start, end=end, attendees=people or None,
                                 organizer=organizer, **extra)


def find_event(ws: Any, title: str) -> Any:
    for e in ws.calendar.events_of():
        if e.summary == title:
            return e
    raise LookupError(f"no event titled {title!r}")


def event_by_title(s: Script, title: str) -> dict[str, Any]:
    """What an agent does to find an event: search, then take the one whose title matches."""
    items = s("calendar_events_list", calendarId="primary", q=title)["items"]
    return next(i for i in items if i["summary"] == title)


def new_events(start: Any, end: Any) -> list[Any]:
    before = start.calendar.db.events
    return [e for eid, e in end.calendar.db.events.items() if eid not in before and e.status != "cancelled"]


def starts_at(e: Any) -> datetime:
    return event_time(e.start, "start")


def ends_at(e: Any) -> datetime:
    return event_time(e.end, "end")


def dt_body(dt: datetime) -> dict[str, str]:
    return {"dateTime": dt.strftime("%Y-%m-%dT%H:%M:%SZ"), "timeZone": "UTC"}


def attendee_emails(e: Any) -> set[str]:
    return {a.email.lower() for a in e.attendees}
