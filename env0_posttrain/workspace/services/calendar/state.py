"""Calendar's state mechanics every resource uses: access to a calendar, finding an event (an occurrence of a
recurring one included), storing a change, and the zone answers are given in."""

from __future__ import annotations

from datetime import datetime, tzinfo

from ...errors import forbidden, not_found
from ..push_channels import PushChannels
from . import recurrence
from .data_model import CalendarDB, CalendarRow, Event
from .times import event_time, zone

_TIMES: dict[int, tuple[Event, datetime, datetime]] = {}

_TIMES_MAX = 8192


def event_times(e: Event) -> tuple[datetime, datetime]:
    """An event row's parsed (start, end), memoised per row object: rows are immutable and the seeded
    company's events are shared by every workspace, so each is parsed once, not once per timeline."""
    hit = _TIMES.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1], hit[2]
    start, end = event_time(e.start, "start"), event_time(e.end, "end")
    if len(_TIMES) >= _TIMES_MAX:
        _TIMES.clear()
    _TIMES[id(e)] = (e, start, end)  # the entry holds the row, so its id is not reused while cached
    return start, end


class CalendarState(PushChannels):
    name = "calendar"
    DB = CalendarDB
    db: CalendarDB

    def cal_id(self, calendarId: str) -> str:
        return self.ws.me.email if calendarId == "primary" else calendarId

    def role(self, cal: CalendarRow) -> str:
        if cal.owner == self.ws.me.email:
            return "owner"
        return cal.meRole or "freeBusyReader"

    def _cal(self, calendarId: str, need: str = "reader") -> CalendarRow:
        cal = self.db.calendars.get(self.cal_id(calendarId))
        if cal is None:
            raise not_found("Not Found")
        role = self.role(cal)
        if need == "reader" and role == "freeBusyReader":
            raise not_found("Not Found")
        if need == "writer" and role not in ("owner", "writer"):
            raise (not_found("Not Found") if role == "freeBusyReader" else
                   forbidden("You need to have writer access to this calendar.", "requiredAccessLevel"))
        return cal

    def zone_of(self, cal_id: str, requested: str | None = None) -> tzinfo:
        """The zone an answer gives times in: the request's `timeZone`, else the calendar's."""
        if requested:
            return zone(requested, "Invalid time zone definition.", "timeZone")
        cal = self.db.calendars.get(cal_id)
        return zone(cal.timeZone if cal else "UTC")

    def series_zone(self, e: Event) -> tzinfo:
        cal = self.db.calendars.get(e.calendarId)
        return recurrence.series_zone(e, cal.timeZone if cal else "UTC")

    def timeline(self) -> list[tuple[datetime, datetime, Event]]:
        """All events with parsed times (a recurring one at its first occurrence), by start; memoised until the
        events table changes."""
        def build() -> list[tuple[datetime, datetime, Event]]:
            rows = [(*event_times(e), e) for e in self.db.events.values()]
            rows.sort(key=lambda r: (r[0], r[2].id))
            return rows
        return self.db.cached("timeline", self.db.events.version, build)

    def series(self) -> list[Event]:
        """The recurring events, by id; memoised until the events table changes."""
        return self.db.cached("series", self.db.events.version,
                              lambda: sorted((e for e in self.db.events.values() if e.recurrence), key=lambda e: e.id))

    def on_calendar(self, e: Event, cal_id: str) -> bool:
        return e.calendarId == cal_id or any(a.email == cal_id for a in e.attendees)

    def _event(self, cal: CalendarRow, eid: str) -> Event:
        """The event an id names on a calendar: a stored one, or an occurrence of a recurring one."""
        e = self.db.events.get(eid)
        if e is None:
            parts = recurrence.split_id(eid)
            series = self.db.events.get(parts[0]) if parts else None
            if parts and series is not None and series.recurrence:
                original = recurrence.is_occurrence(series, self.series_zone(series), parts[1])
                e = recurrence.instance(series, original) if original is not None else None
        if e is None or not self.on_calendar(e, cal.id):
            raise not_found("Not Found")
        return e

    def save(self, ev: Event) -> Event:
        """Store a changed event (an occurrence on its series, as its exception), numbered for incremental sync."""
        self.db.rev += 1
        ev = ev.model_copy(update={"rev": self.db.rev})
        if ev.recurringEventId:
            series = self.db.events[ev.recurringEventId]
            key = ev.id.rpartition("_")[2]
            self.db.events[series.id] = series.model_copy(update={"exceptions": {**(series.exceptions or {}), key: ev}})
        else:
            self.db.events[ev.id] = ev
        return ev

    def events_of(self, calendar_id: str | None = None) -> list[Event]:
        cid = calendar_id or self.ws.me.email
        return sorted((e for e in self.db.events.values() if self.on_calendar(e, cid)),
                      key=lambda e: (event_times(e)[0], e.id))
