"""Calendar v3 events and freebusy; the other resources are mixins from the sibling modules."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ...base import BASE32HEX, Service, api
from ...errors import bad_request, conflict, forbidden, google_error, not_found
from ...paging import check_size, page
from .acl import AclMixin
from .calendars import CalendarsMixin
from .colors import EVENT_COLORS
from . import event_fields
from .data_model import Attendee, CalendarDB, CalendarRow, Event, ListEntry
from .events_more import EventsMoreMixin
from .freebusy import FreeBusyMixin
from .settings import SettingsMixin
from .times import event_time, fmt, normalize_time, parse_rfc3339

C = "calendar/v3"
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

def _color(v: Any) -> str | None:
    if v is None:
        return None
    if str(v) not in EVENT_COLORS:
        raise bad_request("Invalid value for colorId.", "invalid", "colorId")
    return str(v)


_ID = re.compile(r"^[a-v0-9]{5,1024}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class Calendar(CalendarsMixin, AclMixin, EventsMoreMixin, FreeBusyMixin, SettingsMixin, Service):
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

    def timeline(self) -> list[tuple[datetime, datetime, Event]]:
        """All events with parsed times, by start; memoised until the events table changes."""
        def build() -> list[tuple[datetime, datetime, Event]]:
            rows = [(*event_times(e), e) for e in self.db.events.values()]
            rows.sort(key=lambda r: (r[0], r[2].id))
            return rows
        return self.db.cached("timeline", self.db.events.version, build)

    def on_calendar(self, e: Event, cal_id: str) -> bool:
        return e.calendarId == cal_id or any(a.email == cal_id for a in e.attendees)

    def _event(self, cal: CalendarRow, eid: str) -> Event:
        e = self.db.events.get(eid)
        if e is None or not self.on_calendar(e, cal.id):
            raise not_found("Not Found")
        return e

    # -- rendering ------------------------------------------------------------------------------
    def render(self, e: Event, viewer: str) -> dict[str, Any]:
        me = self.ws.me.email
        org = self.ws.person(e.organizerEmail)
        out: dict[str, Any] = {
            "kind": "calendar#event", "etag": f"\"{3000000000000000 + e.sequence * 1000 + len(e.updated)}\"",
            "id": e.id, "status": e.status,
            "htmlLink": f"https://www.google.com/calendar/event?eid={e.id}", "created": e.created, "updated": e.updated,
            "summary": e.summary}
        for k in ("description", "location", "colorId", "transparency", "visibility"):
            if getattr(e, k) is not None:
                out[k] = getattr(e, k)
        out["creator"] = {"email": e.creatorEmail, **({"self": True} if e.creatorEmail == me else {})}
        organizer: dict[str, Any] = {"email": e.organizerEmail}
        if org:
            organizer["displayName"] = org.name
        if e.organizerEmail == me:
            organizer["self"] = True
        out["organizer"] = organizer
        out["start"], out["end"] = dict(e.start), dict(e.end)
        if e.recurrence:
            out["recurrence"] = list(e.recurrence)
        out["iCalUID"] = e.iCalUID or f"{e.id}@google.com"
        out["sequence"] = e.sequence
        if e.attendees:
            atts = []
            for a in e.attendees:
                d = a.dump()
                if a.email == me:
                    d["self"] = True
                atts.append(d)
            out["attendees"] = atts
        if e.attachments:
            out["attachments"] = [dict(a) for a in e.attachments]
        out["reminders"] = {"useDefault": True}
        out["eventType"] = "default"
        out.update(e.kept)
        return out

    # -- events ---------------------------------------------------------------------------------
    @api("calendar.events.list", f"GET {C}/calendars/{{calendarId}}/events", "List events in a time range.",
         params={"calendarId": "'primary' or a calendar id", "timeMin": "RFC3339", "timeMax": "RFC3339",
                 "q": "free text", "singleEvents": "", "orderBy": "startTime|updated", "maxResults": "",
                 "pageToken": ""})
    def events_list(self, calendarId: str = "primary", timeMin: str | None = None, timeMax: str | None = None,
                    q: str | None = None, singleEvents: bool = False, orderBy: str | None = None,
                    maxResults: int | None = None, pageToken: str | None = None,
                    showDeleted: bool = False, timeZone: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        lo = parse_rfc3339(timeMin, "timeMin") if timeMin else None
        hi = parse_rfc3339(timeMax, "timeMax") if timeMax else None
        if lo and hi and lo >= hi:
            raise bad_request("Bad Request", "timeRangeEmpty", "timeMax")
        if orderBy not in (None, "startTime", "updated"):
            raise bad_request(f"Invalid value for orderBy: {orderBy}", "invalid", "orderBy")
        if orderBy == "startTime" and not singleEvents:
            raise bad_request("The requested ordering is not available for the particular query.", "badRequest")
        size = check_size(maxResults, 250, 2500, "maxResults")
        terms = (q or "").lower().split()
        found = []
        for s, en, e in self.timeline():
            if hi and s >= hi:
                break
            if (lo and en <= lo) or not self.on_calendar(e, cal.id) or (e.status == "cancelled" and not showDeleted):
                continue
            if terms:
                text = " ".join([e.summary, e.description or "", e.location or "", e.organizerEmail,
                                 *(a.email for a in e.attendees)]).lower()
                if not all(t in text for t in terms):
                    continue
            found.append((s, e))
        if orderBy == "updated":
            found.sort(key=lambda p: (p[1].updated, p[1].id))
        else:
            found.sort(key=lambda p: (p[0], p[1].id))
        chunk, nxt = page([e for _, e in found], pageToken, size)
        out: dict[str, Any] = {"kind": "calendar#events", "summary": cal.summary,
                               "updated": self.ws.now_rfc3339(), "timeZone": cal.timeZone,
                               "accessRole": self.role(cal), "defaultReminders": [],
                               "items": [self.render(e, cal.id) for e in chunk]}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    @api("calendar.events.get", f"GET {C}/calendars/{{calendarId}}/events/{{eventId}}", "Get one event.",
         params={"calendarId": "", "eventId": ""})
    def events_get(self, eventId: str, calendarId: str = "primary", timeZone: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        return self.render(self._event(cal, eventId), cal.id)

    def _attendees(self, raw: Any, prev: tuple[Attendee, ...] = ()) -> tuple[Attendee, ...]:
        if not isinstance(raw, list):
            raise bad_request("Invalid attendees.", "invalid")
        old = {a.email: a for a in prev}
        out, seen = [], set()
        for a in raw:
            email = (a.get("email") or "").strip().lower() if isinstance(a, dict) else ""
            if not _EMAIL.match(email):
                raise bad_request("Invalid attendee email.", "invalid")
            if email in seen:
                continue
            seen.add(email)
            p = self.ws.person(email)
            status = a.get("responseStatus") or (old[email].responseStatus if email in old else "needsAction")
            if status not in ("needsAction", "declined", "tentative", "accepted"):
                raise bad_request("Invalid attendee responseStatus.", "invalid")
            out.append(Attendee(email=email, displayName=a.get("displayName") or (p.name if p else None),
                                responseStatus=status, optional=a.get("optional") or None))
        return tuple(out)

    @api("calendar.events.insert", f"POST {C}/calendars/{{calendarId}}/events",
         "Create an event. body: summary, start{dateTime}, end{dateTime}, attendees[{email}], description, location.",
         writes=True, params={"calendarId": "'primary'", "body": "Event", "sendUpdates": "all|none"})
    def events_insert(self, body: dict, calendarId: str = "primary", sendUpdates: str | None = None,
                      conferenceDataVersion: int | None = None, supportsAttachments: bool | None = None,
                      maxAttendees: int | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")
        fields = event_fields.kept(body, conferenceDataVersion)
        files = event_fields.attachments(self.ws, body, supportsAttachments)
        s, e = event_time(body.get("start"), "start"), event_time(body.get("end"), "end")
        if e < s:
            raise bad_request("The specified time range is empty.", "timeRangeEmpty")
        eid = body.get("id")
        if eid is not None:
            if not isinstance(eid, str) or not _ID.match(eid):
                raise bad_request("Invalid resource id value.", "invalid")
            if eid in self.db.events:
                raise conflict("The requested identifier already exists.", "duplicate")
        else:
            eid = self.new_id("event", BASE32HEX, 26)
        now = self.ws.now_rfc3339()
        status = body.get("status") or "confirmed"
        if status not in ("confirmed", "tentative", "cancelled"):
            raise bad_request("Invalid value for status.", "invalid", "status")
        seq = body.get("sequence", 0)
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise bad_request("Invalid value for sequence.", "invalid", "sequence")
        ev = Event(id=eid, calendarId=cal.id, summary=str(body.get("summary") or ""), status=status, sequence=seq,
                   description=body.get("description"), location=body.get("location"),
                   start=normalize_time(body["start"]), end=normalize_time(body["end"]),
                   attendees=self._attendees(body.get("attendees") or []), organizerEmail=cal.id,
                   creatorEmail=self.ws.me.email, created=now, updated=now,
                   transparency=body.get("transparency"), visibility=body.get("visibility"),
                   colorId=_color(body.get("colorId")),
                   recurrence=tuple(body["recurrence"]) if isinstance(body.get("recurrence"), list) else None,
                   attachments=files or (), kept=event_fields.merged({}, fields))
        self.db.events[eid] = ev
        return self.trimmed(self.render(ev, cal.id), maxAttendees)

    @staticmethod
    def trimmed(out: dict[str, Any], max_attendees: int | None) -> dict[str, Any]:
        """maxAttendees: past it, only the viewer's own attendee entry is returned and attendeesOmitted is set."""
        if max_attendees is not None and len(out.get("attendees") or []) > max_attendees:
            out["attendees"] = [a for a in out["attendees"] if a.get("self")]
            out["attendeesOmitted"] = True
        return out

    @api("calendar.events.patch", f"PATCH {C}/calendars/{{calendarId}}/events/{{eventId}}",
         "Update fields of an event (only those given in body).", writes=True,
         params={"calendarId": "", "eventId": "", "body": "Event fields to change", "sendUpdates": ""})
    def events_patch(self, eventId: str, body: dict, calendarId: str = "primary",
                     sendUpdates: str | None = None, conferenceDataVersion: int | None = None,
                     supportsAttachments: bool | None = None, maxAttendees: int | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        ev = self._event(cal, eventId)
        organizer = self.role(self.db.calendars[ev.calendarId]) in ("owner", "writer")
        if not organizer:
            return self._respond(ev, body, cal.id)
        upd: dict[str, Any] = {}
        for k in ("summary", "description", "location", "transparency", "visibility", "status"):
            if k in body:
                upd[k] = body[k]
        if "colorId" in body:
            upd["colorId"] = _color(body["colorId"])
        if "status" in upd and upd["status"] not in ("confirmed", "tentative", "cancelled"):
            raise bad_request("Invalid value for status.", "invalid")
        start, end = body.get("start", ev.start), body.get("end", ev.end)
        if "start" in body or "end" in body:
            if event_time(end, "end") < event_time(start, "start"):
                raise bad_request("The specified time range is empty.", "timeRangeEmpty")
            upd["start"], upd["end"] = normalize_time(start), normalize_time(end)
            upd["sequence"] = ev.sequence + 1
        if "sequence" in body:  # a client may set it (it must not go back)
            seq = body["sequence"]
            if isinstance(seq, bool) or not isinstance(seq, int) or seq < ev.sequence:
                raise bad_request("Invalid sequence value. The specified sequence number is below the current "
                                  "sequence number of the resource.", "invalidSequenceValue", "sequence")
            upd["sequence"] = seq
        if "attendees" in body:
            upd["attendees"] = self._attendees(body["attendees"], ev.attendees)
        if "recurrence" in body:
            rec = body["recurrence"]
            if rec is not None and (not isinstance(rec, list) or not all(isinstance(r, str) for r in rec)):
                raise bad_request("Invalid value for recurrence.", "invalid", "recurrence")
            upd["recurrence"] = tuple(rec) if rec else None
        upd["kept"] = event_fields.merged(ev.kept, event_fields.kept(body, conferenceDataVersion))
        files = event_fields.attachments(self.ws, body, supportsAttachments)
        if files is not None:
            upd["attachments"] = files
        upd["updated"] = self.ws.now_rfc3339()
        ev = ev.model_copy(update=upd)
        self.db.events[ev.id] = ev
        return self.trimmed(self.render(ev, cal.id), maxAttendees)

    def _respond(self, ev: Event, body: dict, cal_id: str) -> dict[str, Any]:
        """A non-organizer may only change their own responseStatus."""
        me = self.ws.me.email
        if set(body) - {"attendees"}:
            raise forbidden("Shared properties can only be changed by the organizer of the event.",
                            "forbiddenForNonOrganizer")
        mine = [a for a in body.get("attendees") or [] if isinstance(a, dict) and a.get("email", "").lower() == me]
        if not mine:
            raise forbidden("Shared properties can only be changed by the organizer of the event.",
                            "forbiddenForNonOrganizer")
        status = mine[0].get("responseStatus", "needsAction")
        if status not in ("needsAction", "declined", "tentative", "accepted"):
            raise bad_request("Invalid attendee responseStatus.", "invalid")
        atts = tuple(a.model_copy(update={"responseStatus": status}) if a.email == me else a for a in ev.attendees)
        ev = ev.model_copy(update={"attendees": atts, "updated": self.ws.now_rfc3339()})
        self.db.events[ev.id] = ev
        return self.render(ev, cal_id)

    @api("calendar.events.delete", f"DELETE {C}/calendars/{{calendarId}}/events/{{eventId}}",
         "Delete (cancel) an event.", writes=True, status=204,
         params={"calendarId": "", "eventId": "", "sendUpdates": ""})
    def events_delete(self, eventId: str, calendarId: str = "primary", sendUpdates: str | None = None) -> None:
        cal = self._cal(calendarId)
        ev = self._event(cal, eventId)
        if ev.status == "cancelled":
            raise google_error(410, "Resource has been deleted", "deleted")
        if self.role(self.db.calendars[ev.calendarId]) in ("owner", "writer"):
            self.db.events[ev.id] = ev.model_copy(update={"status": "cancelled", "updated": self.ws.now_rfc3339(),
                                                          "sequence": ev.sequence + 1})
        else:
            self._respond(ev, {"attendees": [{"email": self.ws.me.email, "responseStatus": "declined"}]}, cal.id)

    @api("calendar.events.move", f"POST {C}/calendars/{{calendarId}}/events/{{eventId}}/move",
         "Move an event to another calendar.", writes=True,
         params={"calendarId": "", "eventId": "", "destination": "calendar id"})
    def events_move(self, eventId: str, destination: str, calendarId: str = "primary",
                    sendUpdates: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")
        ev = self._event(cal, eventId)
        if ev.calendarId != cal.id:
            raise forbidden("Shared properties can only be changed by the organizer of the event.",
                            "forbiddenForNonOrganizer")
        dest = self._cal(destination, "writer")
        ev = ev.model_copy(update={"calendarId": dest.id, "organizerEmail": dest.id,
                                   "updated": self.ws.now_rfc3339()})
        self.db.events[ev.id] = ev
        return self.render(ev, dest.id)

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
