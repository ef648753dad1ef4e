"""Calendar state: calendars (one primary per person, plus shared ones) and events.

An event is stored once, on its organizer's calendar, and shows on every attendee's calendar,
as invitations do in Google Calendar.
"""

from __future__ import annotations

from typing import Any

from ...base import DB, Row, table


class CalendarRow(Row):
    id: str
    summary: str
    owner: str  # email of the owner
    timeZone: str = "UTC"
    description: str | None = None
    meRole: str | None = None  # the agent user's access when not the owner: reader | writer | None (free/busy only)


class Attendee(Row):
    email: str
    displayName: str | None = None
    responseStatus: str = "needsAction"
    optional: bool | None = None
    organizer: bool | None = None


class Event(Row):
    id: str
    calendarId: str  # the organizer's calendar
    status: str = "confirmed"
    summary: str = ""
    description: str | None = None
    location: str | None = None
    start: dict[str, Any]
    end: dict[str, Any]
    attendees: tuple[Attendee, ...] = ()
    organizerEmail: str
    creatorEmail: str
    created: str
    updated: str
    sequence: int = 0
    transparency: str | None = None
    visibility: str | None = None
    recurrence: tuple[str, ...] | None = None


class CalendarDB(DB):
    calendars: dict[str, CalendarRow] = table()
    events: dict[str, Event] = table()
