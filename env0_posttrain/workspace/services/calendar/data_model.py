"""Calendar state: calendars (one primary per person, plus shared ones), events, the agent user's
calendar list, ACL rules, settings and notification channels.

An event is stored once, on its organizer's calendar, and shows on every attendee's calendar,
as invitations do in Google Calendar. Its start/end are stored as times.py says (a UTC instant plus the
zone it was written in, or a date). A recurring event keeps its changed occurrences (Google's exceptions:
moved, edited or cancelled) on its own row, keyed by the occurrence's stamp; `rev` orders changes for
incremental sync (sync.py). The calendar list and the settings are the agent user's own
(the only user that calls the API); ACL rules are keyed "<calendarId>/<ruleId>" and the owner's own
rule is implied by CalendarRow.owner, never stored.
"""

from __future__ import annotations

from typing import Any

from ...base import DB, Row, table
from ..push_channels import Channel


class CalendarRow(Row):
    id: str
    summary: str
    owner: str  # email of the owner
    timeZone: str = "UTC"
    description: str | None = None
    location: str | None = None
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
    iCalUID: str | None = None  # set by events.import; otherwise "<id>@google.com"
    colorId: str | None = None
    attachments: tuple[dict[str, Any], ...] = ()
    kept: dict[str, Any] = {}  # fields kept as written (event_fields.KEPT): reminders, guest permissions, ...
    recurringEventId: str | None = None  # an occurrence: its series
    originalStart: dict[str, Any] | None = None  # an occurrence: its start as the series gives it (stored form)
    exceptions: dict[str, "Event"] | None = None  # a series: its changed occurrences, by stamp (recurrence.py)
    rev: int | None = None  # the change counter at its last change through the API (None: as seeded)


class ListEntry(Row):
    """The agent user's calendarList entry: presence plus their per-user overrides."""
    id: str  # the calendar id
    summaryOverride: str | None = None
    colorId: str | None = None
    backgroundColor: str | None = None
    foregroundColor: str | None = None
    hidden: bool = False
    selected: bool = True
    defaultReminders: tuple[dict[str, Any], ...] = ()


class AclRule(Row):
    calendarId: str
    id: str  # "user:a@x.com" | "group:g@x.com" | "domain:x.com" | "default"
    scopeType: str
    scopeValue: str | None = None
    role: str  # none | freeBusyReader | reader | writer | owner


class Setting(Row):
    id: str
    value: str


class CalendarDB(DB):
    rev: int = 0  # counts event changes; a sync token names one (sync.py)
    calendars: dict[str, CalendarRow] = table()
    events: dict[str, Event] = table()
    calendarList: dict[str, ListEntry] = table()
    acl: dict[str, AclRule] = table()
    settings: dict[str, Setting] = table()
    channels: dict[str, Channel] = table()
