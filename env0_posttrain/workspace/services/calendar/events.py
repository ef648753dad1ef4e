"""Calendar v3 events.*: list (with singleEvents expansion and syncToken), get, insert, patch, update, delete, move,
import, quickAdd, instances.

Every method that takes an event id takes an instance id too (`<seriesId>_<stamp>`, recurrence.py): a write to one
occurrence is kept on its series as that occurrence's exception. Times come back in the requested `timeZone`, else
the calendar's (times.py).
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from typing import Any

from ...base import BASE32HEX, api
from ...errors import bad_request, conflict, forbidden, google_error
from ...paging import check_size, page
from ..push_channels import CHANNEL_PARAMS
from . import event_fields, recurrence, sync
from .calendars import etag
from .colors import EVENT_COLORS
from .data_model import Attendee, CalendarRow, Event
from .quick_add import parse_quick
from .state import CalendarState
from .times import event_time, fmt, merged, parse_rfc3339, rendered, stored

C = "calendar/v3"
STATUSES = ("confirmed", "tentative", "cancelled")
_REPLACED = ("summary", "description", "location", "transparency", "visibility", "colorId")
_ID = re.compile(r"^[a-v0-9]{5,1024}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _color(v: Any) -> str | None:
    if v is None:
        return None
    if str(v) not in EVENT_COLORS:
        raise bad_request("Invalid value for colorId.", "invalid", "colorId")
    return str(v)


def _times(start: Any, end: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The stored start and end a client wrote; 400 on a bad time or zone, a date beside a dateTime, or an end
    before the start."""
    s, e = stored(start, "start"), stored(end, "end")
    if ("date" in s) != ("date" in e):  # an all-day start with a timed end, or the reverse
        raise bad_request("Start and end times must either both be date or both be dateTime.", "invalid")
    if event_time(e, "end") < event_time(s, "start"):
        raise bad_request("The specified time range is empty.", "timeRangeEmpty")
    return s, e


class EventsMixin(CalendarState):

    # -- rendering ------------------------------------------------------------------------------
    def render(self, e: Event, viewer: str, tz: tzinfo | None = None) -> dict[str, Any]:
        """The Event resource as `viewer`'s calendar shows it, its times in `tz` (default: that calendar's zone)."""
        tz = tz or self.zone_of(viewer)
        me = self.ws.me.email
        org = self.ws.person(e.organizerEmail)
        out: dict[str, Any] = {
            "kind": "calendar#event", "etag": etag(e.canonical()),
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
        out["start"], out["end"] = rendered(e.start, tz), rendered(e.end, tz)
        if e.recurrence:
            out["recurrence"] = list(e.recurrence)
        if e.recurringEventId:
            out["recurringEventId"] = e.recurringEventId
            out["originalStartTime"] = rendered(e.originalStart or e.start, tz)
        out["iCalUID"] = e.iCalUID or f"{e.recurringEventId or e.id}@google.com"
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

    @staticmethod
    def trimmed(out: dict[str, Any], max_attendees: int | None) -> dict[str, Any]:
        """maxAttendees: past it, only the viewer's own attendee entry is returned and attendeesOmitted is set."""
        if max_attendees is not None and len(out.get("attendees") or []) > max_attendees:
            out["attendees"] = [a for a in out["attendees"] if a.get("self")]
            out["attendeesOmitted"] = True
        return out

    def _listing(self, cal: CalendarRow, tz: tzinfo, items: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": "calendar#events", "etag": etag(cal.canonical(), *(i.get("etag") for i in items)),
                "summary": cal.summary, "updated": self.ws.now_rfc3339(),
                "timeZone": cal.timeZone, "accessRole": self.role(cal), "defaultReminders": [], "items": items}

    # -- reads ----------------------------------------------------------------------------------
    @api("calendar.events.list", f"GET {C}/calendars/{{calendarId}}/events", "List events in a time range.",
         params={"calendarId": "'primary' or a calendar id", "timeMin": "RFC3339", "timeMax": "RFC3339",
                 "q": "free text", "singleEvents": "", "orderBy": "startTime|updated", "maxResults": "",
                 "pageToken": ""})
    def events_list(self, calendarId: str = "primary", timeMin: str | None = None, timeMax: str | None = None,
                    q: str | None = None, singleEvents: bool = False, orderBy: str | None = None,
                    maxResults: int | None = None, pageToken: str | None = None,
                    showDeleted: bool | None = None, timeZone: str | None = None,
                    syncToken: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        tz = self.zone_of(cal.id, timeZone)
        since = None
        if syncToken is not None:
            sync.check_alone({"timeMin": timeMin, "timeMax": timeMax, "q": q, "orderBy": orderBy}, showDeleted)
            since = sync.since(syncToken, self.ws.seed, cal.id, self.db.rev)
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

        def wanted(e: Event, deleted_too: bool) -> bool:
            if not self.on_calendar(e, cal.id):
                return False
            if since is not None:
                return (e.rev or 0) > since
            if e.status == "cancelled" and not (showDeleted or deleted_too):
                return False
            if not terms:
                return True
            text = " ".join([e.summary, e.description or "", e.location or "", e.organizerEmail,
                             *(a.email for a in e.attendees)]).lower()
            return all(t in text for t in terms)

        found: list[tuple[datetime, Event]] = []
        for s, en, e in self.timeline():
            if e.recurrence:
                continue  # a series: below
            if since is None and hi and s >= hi:
                break
            if (since is not None or not lo or en > lo) and wanted(e, False):
                found.append((s, e))
        for e in self.series():
            if since is None and e.status == "cancelled" and not showDeleted:
                continue  # a deleted series: none of its occurrences either
            if not (self.on_calendar(e, cal.id) or any(self.on_calendar(x, cal.id) for x in (e.exceptions or {}).values())):
                continue
            found += self._series_items(e, lo if since is None else None, hi if since is None else None,
                                        singleEvents, wanted, since)
        if orderBy == "updated":
            found.sort(key=lambda p: (p[1].updated, p[1].id))
        else:
            found.sort(key=lambda p: (p[0], p[1].id))
        chunk, nxt = page([e for _, e in found], pageToken, size)
        out = self._listing(cal, tz, [self.render(e, cal.id, tz) for e in chunk])
        if nxt:
            out["nextPageToken"] = nxt
        elif not q and not orderBy:
            out["nextSyncToken"] = sync.issue(self.ws.seed, cal.id, self.db.rev)
        return out

    def _series_items(self, e: Event, lo: datetime | None, hi: datetime | None, single: bool, wanted: Any,
                      since: int | None) -> list[tuple[datetime, Event]]:
        """A series in a listing: its occurrences (singleEvents), or the series itself plus its changed occurrences
        (Calendar lists a cancelled occurrence there even without showDeleted). In a sync, what changed since."""
        tz = self.series_zone(e)
        if since is not None:
            out = [x for x in (e.exceptions or {}).values() if wanted(x, True)]
            if wanted(e, True):
                changed = {x.id for x in out}
                out += ([x for x in recurrence.instances(e, tz, None, None, self.ws.now) if x.id not in changed]
                        if single else [e])
        elif single:
            out = [x for x in recurrence.instances(e, tz, lo, hi, self.ws.now) if wanted(x, False)]
        elif not wanted(e, False) or next(recurrence.originals(e, tz, lo, hi, self.ws.now), None) is None:
            out = []
        else:
            out = [e] + [x for x in (e.exceptions or {}).values() if wanted(x, True)
                         and (lo is None or event_time(x.end, "end") > lo)
                         and (hi is None or event_time(x.start, "start") < hi)]
        return [(event_time(x.start, "start"), x) for x in out]

    @api("calendar.events.get", f"GET {C}/calendars/{{calendarId}}/events/{{eventId}}", "Get one event.",
         params={"calendarId": "", "eventId": ""})
    def events_get(self, eventId: str, calendarId: str = "primary", timeZone: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        return self.render(self._event(cal, eventId), cal.id, self.zone_of(cal.id, timeZone))

    @api("calendar.events.instances", f"GET {C}/calendars/{{calendarId}}/events/{{eventId}}/instances",
         "List the occurrences of a recurring event.",
         params={"calendarId": "", "eventId": "", "timeMin": "RFC3339", "timeMax": "RFC3339", "maxResults": ""})
    def events_instances(self, eventId: str, calendarId: str = "primary", timeMin: str | None = None,
                         timeMax: str | None = None, maxResults: int | None = None, pageToken: str | None = None,
                         showDeleted: bool = False, timeZone: str | None = None, originalStart: str | None = None,
                         maxAttendees: int | None = None, alwaysIncludeEmail: bool | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        ev = self._event(cal, eventId)
        tz = self.zone_of(cal.id, timeZone)
        lo = parse_rfc3339(timeMin, "timeMin") if timeMin else None
        hi = parse_rfc3339(timeMax, "timeMax") if timeMax else None
        want = parse_rfc3339(originalStart, "originalStart") if originalStart else None
        size = check_size(maxResults, 250, 2500, "maxResults")
        if ev.recurrence:
            found = recurrence.instances(ev, self.series_zone(ev), lo, hi, self.ws.now)
        else:
            found = [ev] if (lo is None or event_time(ev.end, "end") > lo) and \
                (hi is None or event_time(ev.start, "start") < hi) else []
        items = [self.trimmed(self.render(x, cal.id, tz), maxAttendees) for x in found
                 if (showDeleted or x.status != "cancelled")
                 and (want is None or event_time(x.originalStart or x.start, "start") == want)]
        chunk, nxt = page(items, pageToken, size)
        out = self._listing(cal, tz, chunk)
        if nxt:
            out["nextPageToken"] = nxt
        return out

    # -- writes ---------------------------------------------------------------------------------
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

    def _check_fields(self, body: dict) -> None:
        if body.get("status") not in (None, *STATUSES):
            raise bad_request("Invalid value for status.", "invalid", "status")
        for k in ("transparency", "visibility"):
            ok = ("opaque", "transparent") if k == "transparency" else ("default", "public", "private", "confidential")
            if body.get(k) not in (None, *ok):
                raise bad_request(f"Invalid value for {k}.", "invalid", k)
        for k in ("summary", "description", "location"):
            if body.get(k) is not None and not isinstance(body[k], str):
                raise bad_request(f"Invalid value for {k}.", "invalid", k)
        if body.get("colorId") is not None and str(body["colorId"]) not in EVENT_COLORS:
            raise bad_request("Invalid value for colorId.", "invalid", "colorId")
        _recurrence(body.get("recurrence"))

    def _checked(self, ev: Event) -> Event:
        """The event, once its recurrence reads (400 invalid otherwise), before anything is stored."""
        if ev.recurrence:
            if ev.recurringEventId:
                raise bad_request("An instance of a recurring event cannot have a recurrence.", "invalid",
                                  "recurrence")
            recurrence.rule_set(ev, self.series_zone(ev))
        return ev

    @api("calendar.events.insert", f"POST {C}/calendars/{{calendarId}}/events",
         "Create an event. body: summary, start{dateTime}, end{dateTime}, attendees[{email}], description, location.",
         writes=True, params={"calendarId": "'primary'", "body": "Event", "sendUpdates": "all|none"})
    def events_insert(self, body: dict, calendarId: str = "primary", sendUpdates: str | None = None,
                      conferenceDataVersion: int | None = None, supportsAttachments: bool | None = None,
                      maxAttendees: int | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")
        fields = event_fields.kept(body, conferenceDataVersion)
        files = event_fields.attachments(self.ws, body, supportsAttachments)
        start, end = _times(body.get("start"), body.get("end"))
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
        if status not in STATUSES:
            raise bad_request("Invalid value for status.", "invalid", "status")
        seq = body.get("sequence", 0)
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise bad_request("Invalid value for sequence.", "invalid", "sequence")
        ev = Event(id=eid, calendarId=cal.id, summary=str(body.get("summary") or ""), status=status, sequence=seq,
                   description=body.get("description"), location=body.get("location"), start=start, end=end,
                   attendees=self._attendees(body.get("attendees") or []), organizerEmail=cal.id,
                   creatorEmail=self.ws.me.email, created=now, updated=now,
                   transparency=body.get("transparency"), visibility=body.get("visibility"),
                   colorId=_color(body.get("colorId")), recurrence=_recurrence(body.get("recurrence")),
                   attachments=files or (), kept=event_fields.merged({}, fields))
        ev = self.save(self._checked(ev))
        return self.trimmed(self.render(ev, cal.id), maxAttendees)

    @api("calendar.events.patch", f"PATCH {C}/calendars/{{calendarId}}/events/{{eventId}}",
         "Update fields of an event (only those given in body).", writes=True,
         params={"calendarId": "", "eventId": "", "body": "Event fields to change", "sendUpdates": ""})
    def events_patch(self, eventId: str, body: dict, calendarId: str = "primary",
                     sendUpdates: str | None = None, conferenceDataVersion: int | None = None,
                     supportsAttachments: bool | None = None, maxAttendees: int | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        ev = self._event(cal, eventId)
        if self.role(self.db.calendars[ev.calendarId]) not in ("owner", "writer"):
            return self._respond(ev, body, cal.id)
        upd: dict[str, Any] = {}
        for k in ("summary", "description", "location", "transparency", "visibility", "status"):
            if k in body:
                upd[k] = body[k]
        if "colorId" in body:
            upd["colorId"] = _color(body["colorId"])
        if "status" in upd and upd["status"] not in STATUSES:
            raise bad_request("Invalid value for status.", "invalid")
        if "start" in body or "end" in body:
            start = merged(ev.start, body["start"]) if "start" in body else ev.start
            end = merged(ev.end, body["end"]) if "end" in body else ev.end
            upd["start"], upd["end"] = _times(start, end)
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
            upd["recurrence"] = _recurrence(body["recurrence"])
        upd["kept"] = event_fields.merged(ev.kept, event_fields.kept(body, conferenceDataVersion))
        files = event_fields.attachments(self.ws, body, supportsAttachments)
        if files is not None:
            upd["attachments"] = files
        upd["updated"] = self.ws.now_rfc3339()
        new = self._reset_exceptions(ev, ev.model_copy(update=upd))
        new = self.save(self._checked(new))
        return self.trimmed(self.render(new, cal.id), maxAttendees)

    @api("calendar.events.update", f"PUT {C}/calendars/{{calendarId}}/events/{{eventId}}",
         "Replace an event (fields left out are cleared; start and end are required).", writes=True,
         params={"calendarId": "", "eventId": "", "body": "the full Event", "sendUpdates": "all|externalOnly|none"})
    def events_update(self, eventId: str, body: dict, calendarId: str = "primary", sendUpdates: str | None = None,
                      conferenceDataVersion: int | None = None, maxAttendees: int | None = None,
                      supportsAttachments: bool | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)
        ev = self._event(cal, eventId)
        if self.role(self.db.calendars[ev.calendarId]) not in ("owner", "writer"):
            return self._respond(ev, {"attendees": body.get("attendees") or []}, cal.id)
        self._check_fields(body)
        upd: dict[str, Any] = {k: body.get(k) for k in _REPLACED}
        upd["summary"] = upd["summary"] or ""
        upd["colorId"] = str(upd["colorId"]) if upd["colorId"] is not None else None
        upd["status"] = body.get("status") or "confirmed"
        upd["start"], upd["end"] = _times(body.get("start"), body.get("end"))
        upd["attendees"] = self._attendees(body.get("attendees") or [], ev.attendees)
        upd["recurrence"] = _recurrence(body.get("recurrence"))
        upd["kept"] = event_fields.merged({}, event_fields.kept(body, conferenceDataVersion))  # a full replace
        files = event_fields.attachments(self.ws, body, supportsAttachments)
        if files is not None:
            upd["attachments"] = files
        if (upd["start"], upd["end"]) != (ev.start, ev.end):
            upd["sequence"] = ev.sequence + 1
        upd["updated"] = self.ws.now_rfc3339()
        new = self._reset_exceptions(ev, ev.model_copy(update=upd))
        new = self.save(self._checked(new))
        return self.trimmed(self.render(new, cal.id), maxAttendees)

    @staticmethod
    def _reset_exceptions(old: Event, new: Event) -> Event:
        """A series whose times or rule change drops its changed occurrences, as Calendar's "all events" edit does."""
        if old.exceptions and (old.start, old.end, old.recurrence) != (new.start, new.end, new.recurrence):
            return new.model_copy(update={"exceptions": None})
        return new

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
        ev = self.save(ev.model_copy(update={"attendees": atts, "updated": self.ws.now_rfc3339()}))
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
            self.save(ev.model_copy(update={"status": "cancelled", "updated": self.ws.now_rfc3339(),
                                            "sequence": ev.sequence + 1}))
        else:
            self._respond(ev, {"attendees": [{"email": self.ws.me.email, "responseStatus": "declined"}]}, cal.id)

    @api("calendar.events.move", f"POST {C}/calendars/{{calendarId}}/events/{{eventId}}/move",
         "Move an event to another calendar.", writes=True,
         params={"calendarId": "", "eventId": "", "destination": "calendar id"})
    def events_move(self, eventId: str, destination: str, calendarId: str = "primary",
                    sendUpdates: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")
        ev = self._event(cal, eventId)
        if ev.recurringEventId:
            raise bad_request("An instance of a recurring event cannot be moved; move its series.", "invalid",
                              "eventId")
        if ev.calendarId != cal.id:
            raise forbidden("Shared properties can only be changed by the organizer of the event.",
                            "forbiddenForNonOrganizer")
        dest = self._cal(destination, "writer")
        where = {"calendarId": dest.id, "organizerEmail": dest.id}
        exceptions = {k: x.model_copy(update=where) for k, x in ev.exceptions.items()} if ev.exceptions else None
        ev = self.save(ev.model_copy(update={**where, "exceptions": exceptions, "updated": self.ws.now_rfc3339()}))
        return self.render(ev, dest.id)

    @api("calendar.events.import", f"POST {C}/calendars/{{calendarId}}/events/import",
         "Import a private copy of an existing event (body needs iCalUID, start, end); re-importing updates it.",
         writes=True, params={"calendarId": "", "body": "Event with iCalUID, start, end"})
    def events_import(self, body: dict, calendarId: str = "primary", conferenceDataVersion: int | None = None,
                      supportsAttachments: bool | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")
        uid = body.get("iCalUID")
        if not isinstance(uid, str) or not uid.strip():
            raise bad_request("Missing iCalUID.", "required", "iCalUID")
        self._check_fields(body)
        start, end = _times(body.get("start"), body.get("end"))
        org = body.get("organizer") if isinstance(body.get("organizer"), dict) else {}
        organizer = str(org.get("email") or cal.id).strip().lower()
        prev = next((x for x in self.db.events.values() if x.calendarId == cal.id and x.iCalUID == uid), None)
        now = self.ws.now_rfc3339()
        fields = {k: body.get(k) for k in _REPLACED}
        fields["summary"] = fields["summary"] or ""
        fields["colorId"] = str(fields["colorId"]) if fields["colorId"] is not None else None
        ev = Event(id=prev.id if prev else self.new_id("event", BASE32HEX, 26),
                   calendarId=cal.id, status=body.get("status") or "confirmed", start=start, end=end,
                   attendees=self._attendees(body.get("attendees") or []),
                   organizerEmail=organizer, creatorEmail=organizer, created=prev.created if prev else now,
                   updated=now, sequence=int(body.get("sequence") or 0) if str(body.get("sequence") or 0).isdigit() else 0,
                   recurrence=_recurrence(body.get("recurrence")), iCalUID=uid,
                   attachments=event_fields.attachments(self.ws, body, supportsAttachments) or (),
                   kept=event_fields.merged({}, event_fields.kept(body, conferenceDataVersion)), **fields)
        ev = self.save(self._checked(ev))
        return self.render(ev, cal.id)

    @api("calendar.events.quickAdd", f"POST {C}/calendars/{{calendarId}}/events/quickAdd",
         "Create an event from a line of text, e.g. 'Lunch with Ann tomorrow 12pm-1pm'.", writes=True,
         params={"calendarId": "", "text": "the event described in words", "sendUpdates": ""})
    def events_quickAdd(self, text: str, calendarId: str = "primary", sendUpdates: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")
        if not text.strip():
            raise bad_request("Required parameter: text", "required", "text")
        tz = self.zone_of(cal.id)
        summary, start, end, all_day = parse_quick(text, self.ws.now, tz)
        if all_day:
            st, en = {"date": start.date().isoformat()}, {"date": end.date().isoformat()}
        else:
            st, en = {"dateTime": fmt(start), "timeZone": cal.timeZone}, {"dateTime": fmt(end), "timeZone": cal.timeZone}
        now = self.ws.now_rfc3339()
        ev = self.save(Event(id=self.new_id("event", BASE32HEX, 26), calendarId=cal.id, summary=summary, start=st,
                             end=en, organizerEmail=cal.id, creatorEmail=self.ws.me.email, created=now, updated=now))
        return self.render(ev, cal.id)

    @api("calendar.events.watch", f"POST {C}/calendars/{{calendarId}}/events/watch",
         "Watch a calendar's events for changes (registers a push channel).", writes=True,
         params={"calendarId": "", **CHANNEL_PARAMS})
    def events_watch(self, body: dict, calendarId: str = "primary") -> dict[str, Any]:
        cal = self._cal(calendarId)
        return self.open_channel(body, f"https://www.googleapis.com/calendar/v3/calendars/{cal.id}/events?alt=json")


def _recurrence(rec: Any) -> tuple[str, ...] | None:
    if rec is None:
        return None
    if not isinstance(rec, list) or not all(isinstance(r, str) for r in rec):
        raise bad_request("Invalid value for recurrence.", "invalid", "recurrence")
    return tuple(rec) or None
