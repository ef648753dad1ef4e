"""The Calendar v3 service, assembled from one mixin per API resource (events, calendars, calendarList, acl,
freebusy, settings, colors, channels) over the state mechanics (state.py), plus bootstrap and the seeding helpers."""

from __future__ import annotations

from datetime import datetime

from ...base import BASE32HEX
from .acl import AclMixin
from .calendar_list import CalendarListMixin
from .calendars import CalendarsMixin
from .channels import ChannelsMixin
from .colors import ColorsMixin
from .data_model import Attendee, CalendarRow, Event, ListEntry
from .events import EventsMixin
from .freebusy import FreeBusyMixin
from .settings import SettingsMixin
from .times import fmt


class Calendar(CalendarsMixin, CalendarListMixin, AclMixin, EventsMixin, FreeBusyMixin, SettingsMixin, ColorsMixin,
               ChannelsMixin):
    """Bootstrap and the seeding helpers (not tools) on top of every resource."""

    def bootstrap(self) -> None:
        for p in self.ws.directory:
            self.db.calendars[p.email] = CalendarRow(id=p.email, summary=p.email, owner=p.email)
        self.db.calendarList[self.ws.me.email] = ListEntry(id=self.ws.me.email, defaultReminders=(
            {"method": "popup", "minutes": 10},))
        self.bootstrap_settings()

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
