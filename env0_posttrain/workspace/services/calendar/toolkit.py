"""Calendar v3: the service, assembled from one mixin per API resource (events, calendars, calendarList, acl,
freebusy, settings, colors, channels), plus what they share: access to a calendar, finding an event (an occurrence of a recurring
one included), storing a change, the zone answers are given in, and the seeding helpers."""

from __future__ import annotations

from datetime import datetime, tzinfo

from ...base import BASE32HEX, Service
from ...errors import forbidden, not_found
from . import recurrence
from .acl import AclMixin
from .calendar_list import CalendarListMixin
from .calendars import CalendarsMixin
from .channels import ChannelsMixin
from .colors import ColorsMixin
from .data_model import Attendee, CalendarDB, CalendarRow, Event, ListEntry
from .events import EventsMixin
from .freebusy import FreeBusyMixin
from .settings import SettingsMixin
from .times import event_time, fmt, zone

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


class Calendar(CalendarsMixin, CalendarListMixin, AclMixin, EventsMixin, FreeBusyMixin, SettingsMixin, ColorsMixin,
               ChannelsMixin, Service):
    name = "calendar"
    DB = CalendarDB
    db: CalendarDB

    def bootstrap(self) -> None:
        for p in self.ws.directory:
            self.db.calendars[p.email] = CalendarRow(id=p.email, summary=p.email, owner=p.email)
        self.db.calendarList[self.ws.me.email] = ListEntry(id=self.ws.me.email, defaultReminders=(
            {"method": "popup", "minutes": 10},))
        self.bootstrap_settings()

    # -- access ---------------------------------------------------------------------------------
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

    # -- events ---------------------------------------------------------------------------------
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

    # -- seeding helpers ------------------------------------------------------------------------
    def add_event(self, *, summary: str, start: datetime, end: datetime, organizer: str | None = None,
                  attendees: list[str] | None = None, description: str | None = None, location: str | None = None,
                  responses: dict[str, str] | None = None, all_day: bool = False) -> Event:
        """Plant an event on the organizer's calendar (default: the agent user's)."""
        organizer = organizer or self.ws.me.email
        if organizer not in self.db.calendars:
            raise ValueError(f"no calendar {organizer!r}")
        responses = responses or {}
        atts = []
        for email in attendees or []:
            p = self.ws.person(email)
            atts.append(Attendee(email=email, displayName=p.name if p else None,
                                 responseStatus=responses.get(email, "accepted" if email == organizer else "needsAction")))
        if all_day:
            st, en = {"date": start.date().isoformat()}, {"date": end.date().isoformat()}
        else:
            st, en = {"dateTime": fmt(start), "timeZone": "UTC"}, {"dateTime": fmt(end), "timeZone": "UTC"}
        created = fmt(min(self.ws.now, start) if start < self.ws.now else self.ws.now)
        ev = Event(id=self.new_id("event", BASE32HEX, 26), calendarId=organizer, summary=summary,
                   description=description, location=location, start=st, end=en, attendees=tuple(atts),
                   organizerEmail=organizer, creatorEmail=organizer, created=created, updated=created)
        self.db.events[ev.id] = ev
        return ev

    def add_calendar(self, *, summary: str, owner: str | None = None, me_role: str | None = "reader",
                     description: str | None = None, calendar_id: str | None = None,
                     time_zone: str = "UTC") -> CalendarRow:
        owner = owner or self.ws.me.email
        cid = calendar_id or self.new_id("calendar", BASE32HEX, 26) + "@group.calendar.google.com"
        cal = CalendarRow(id=cid, summary=summary, owner=owner, description=description, timeZone=time_zone,
                          meRole=None if owner == self.ws.me.email else me_role)
        self.db.calendars[cid] = cal
        if owner == self.ws.me.email or me_role in ("reader", "writer"):
            self.db.calendarList[cid] = ListEntry(id=cid)
        return cal

    def events_of(self, calendar_id: str | None = None) -> list[Event]:
        cid = calendar_id or self.ws.me.email
        return sorted((e for e in self.db.events.values() if self.on_calendar(e, cid)),
                      key=lambda e: (event_times(e)[0], e.id))
