"""Calendar v3 events.update (full replace), events.import, events.quickAdd and events.instances."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from ...base import BASE32HEX, api
from ...errors import bad_request
from ...paging import check_size, page
from . import event_fields
from .colors import EVENT_COLORS
from .data_model import Event
from .times import event_time, fmt, normalize_time, parse_rfc3339

C = "calendar/v3"
_REPLACED = ("summary", "description", "location", "transparency", "visibility", "colorId")
_RANGE = re.compile(r"\b(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)\s*(?:-|–|to)\s*(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)", re.I)
_RELATIVE = re.compile(r"\b(today|tomorrow)\b", re.I)


class EventsMoreMixin:
    ws: Any
    db: Any

    def _check_fields(self, body: dict) -> None:
        if body.get("status") not in (None, "confirmed", "tentative", "cancelled"):
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
        rec = body.get("recurrence")
        if rec is not None and (not isinstance(rec, list) or not all(isinstance(r, str) for r in rec)):
            raise bad_request("Invalid value for recurrence.", "invalid", "recurrence")

    @api("calendar.events.update", f"PUT {C}/calendars/{{calendarId}}/events/{{eventId}}",
         "Replace an event (fields left out are cleared; start and end are required).", writes=True,
         params={"calendarId": "", "eventId": "", "body": "the full Event", "sendUpdates": "all|externalOnly|none"})
    def events_update(self, eventId: str, body: dict, calendarId: str = "primary", sendUpdates: str | None = None,
                      conferenceDataVersion: int | None = None, maxAttendees: int | None = None,
                      supportsAttachments: bool | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)  # type: ignore[attr-defined]
        ev = self._event(cal, eventId)  # type: ignore[attr-defined]
        if self.role(self.db.calendars[ev.calendarId]) not in ("owner", "writer"):  # type: ignore[attr-defined]
            return self._respond(ev, {"attendees": body.get("attendees") or []}, cal.id)  # type: ignore[attr-defined]
        self._check_fields(body)
        s, e = event_time(body.get("start"), "start"), event_time(body.get("end"), "end")
        if e < s:
            raise bad_request("The specified time range is empty.", "timeRangeEmpty")
        upd: dict[str, Any] = {k: body.get(k) for k in _REPLACED}
        upd["summary"] = upd["summary"] or ""
        upd["colorId"] = str(upd["colorId"]) if upd["colorId"] is not None else None
        upd["status"] = body.get("status") or "confirmed"
        upd["start"], upd["end"] = normalize_time(body["start"]), normalize_time(body["end"])
        upd["attendees"] = self._attendees(body.get("attendees") or [], ev.attendees)  # type: ignore[attr-defined]
        upd["recurrence"] = tuple(body["recurrence"]) if body.get("recurrence") else None
        upd["kept"] = event_fields.merged({}, event_fields.kept(body, conferenceDataVersion))  # a full replace
        files = event_fields.attachments(self.ws, body, supportsAttachments)
        if files is not None:
            upd["attachments"] = files
        if (upd["start"], upd["end"]) != (ev.start, ev.end):
            upd["sequence"] = ev.sequence + 1
        upd["updated"] = self.ws.now_rfc3339()
        ev = ev.model_copy(update=upd)
        self.db.events[ev.id] = ev
        return self.trimmed(self.render(ev, cal.id), maxAttendees)  # type: ignore[attr-defined]

    @api("calendar.events.import", f"POST {C}/calendars/{{calendarId}}/events/import",
         "Import a private copy of an existing event (body needs iCalUID, start, end); re-importing updates it.",
         writes=True, params={"calendarId": "", "body": "Event with iCalUID, start, end"})
    def events_import(self, body: dict, calendarId: str = "primary", conferenceDataVersion: int | None = None,
                      supportsAttachments: bool | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")  # type: ignore[attr-defined]
        uid = body.get("iCalUID")
        if not isinstance(uid, str) or not uid.strip():
            raise bad_request("Missing iCalUID.", "required", "iCalUID")
        self._check_fields(body)
        s, e = event_time(body.get("start"), "start"), event_time(body.get("end"), "end")
        if e < s:
            raise bad_request("The specified time range is empty.", "timeRangeEmpty")
        org = body.get("organizer") if isinstance(body.get("organizer"), dict) else {}
        organizer = str(org.get("email") or cal.id).strip().lower()
        prev = next((x for x in self.db.events.values() if x.calendarId == cal.id and x.iCalUID == uid), None)
        now = self.ws.now_rfc3339()
        fields = {k: body.get(k) for k in _REPLACED}
        fields["summary"] = fields["summary"] or ""
        fields["colorId"] = str(fields["colorId"]) if fields["colorId"] is not None else None
        ev = Event(id=prev.id if prev else self.new_id("event", BASE32HEX, 26),  # type: ignore[attr-defined]
                   calendarId=cal.id, status=body.get("status") or "confirmed",
                   start=normalize_time(body["start"]), end=normalize_time(body["end"]),
                   attendees=self._attendees(body.get("attendees") or []),  # type: ignore[attr-defined]
                   organizerEmail=organizer, creatorEmail=organizer, created=prev.created if prev else now,
                   updated=now, sequence=int(body.get("sequence") or 0) if str(body.get("sequence") or 0).isdigit() else 0,
                   recurrence=tuple(body["recurrence"]) if body.get("recurrence") else None, iCalUID=uid,
                   attachments=event_fields.attachments(self.ws, body, supportsAttachments) or (),
                   kept=event_fields.merged({}, event_fields.kept(body, conferenceDataVersion)), **fields)
        self.db.events[ev.id] = ev
        return self.render(ev, cal.id)  # type: ignore[attr-defined]

    @api("calendar.events.quickAdd", f"POST {C}/calendars/{{calendarId}}/events/quickAdd",
         "Create an event from a line of text, e.g. 'Lunch with Ann tomorrow 12pm-1pm'.", writes=True,
         params={"calendarId": "", "text": "the event described in words", "sendUpdates": ""})
    def events_quickAdd(self, text: str, calendarId: str = "primary", sendUpdates: str | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId, "writer")  # type: ignore[attr-defined]
        if not text.strip():
            raise bad_request("Required parameter: text", "required", "text")
        summary, start, end, all_day = parse_quick(text, self.ws.now)
        if all_day:
            st, en = {"date": start.date().isoformat()}, {"date": end.date().isoformat()}
        else:
            st, en = {"dateTime": fmt(start), "timeZone": "UTC"}, {"dateTime": fmt(end), "timeZone": "UTC"}
        now = self.ws.now_rfc3339()
        ev = Event(id=self.new_id("event", BASE32HEX, 26), calendarId=cal.id, summary=summary,  # type: ignore[attr-defined]
                   start=st, end=en, organizerEmail=cal.id, creatorEmail=self.ws.me.email, created=now, updated=now)
        self.db.events[ev.id] = ev
        return self.render(ev, cal.id)  # type: ignore[attr-defined]

    @api("calendar.events.instances", f"GET {C}/calendars/{{calendarId}}/events/{{eventId}}/instances",
         "List the occurrences of a recurring event.",
         params={"calendarId": "", "eventId": "", "timeMin": "RFC3339", "timeMax": "RFC3339", "maxResults": ""})
    def events_instances(self, eventId: str, calendarId: str = "primary", timeMin: str | None = None,
                         timeMax: str | None = None, maxResults: int | None = None, pageToken: str | None = None,
                         showDeleted: bool = False, timeZone: str | None = None, originalStart: str | None = None,
                         maxAttendees: int | None = None, alwaysIncludeEmail: bool | None = None) -> dict[str, Any]:
        cal = self._cal(calendarId)  # type: ignore[attr-defined]
        ev = self._event(cal, eventId)  # type: ignore[attr-defined]
        lo = parse_rfc3339(timeMin, "timeMin") if timeMin else None
        hi = parse_rfc3339(timeMax, "timeMax") if timeMax else None
        want = parse_rfc3339(originalStart, "originalStart") if originalStart else None
        size = check_size(maxResults, 250, 2500, "maxResults")
        items = []
        for start in occurrences(ev, lo, hi, limit=2500):
            if want is not None and start != want:
                continue
            items.append(self._instance(ev, start, cal.id))
        if ev.status == "cancelled" and not showDeleted:
            items = []
        chunk, nxt = page(items, pageToken, size)
        out: dict[str, Any] = {"kind": "calendar#events", "summary": cal.summary, "updated": self.ws.now_rfc3339(),
                               "timeZone": cal.timeZone, "accessRole": self.role(cal),  # type: ignore[attr-defined]
                               "defaultReminders": [], "items": chunk}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def _instance(self, ev: Event, start: datetime, viewer: str) -> dict[str, Any]:
        out = self.render(ev, viewer)  # type: ignore[attr-defined]
        if not ev.recurrence:
            return out
        s0, e0 = event_time(ev.start, "start"), event_time(ev.end, "end")
        end = start + (e0 - s0)
        all_day = "date" in ev.start and "dateTime" not in ev.start
        stamp = start.strftime("%Y%m%d") if all_day else start.strftime("%Y%m%dT%H%M%SZ")
        out.pop("recurrence", None)
        out["id"] = f"{ev.id}_{stamp}"
        out["recurringEventId"] = ev.id
        if all_day:
            out["start"], out["end"] = {"date": start.date().isoformat()}, {"date": end.date().isoformat()}
        else:
            tz = ev.start.get("timeZone", "UTC")
            out["start"] = {"dateTime": fmt(start), "timeZone": tz}
            out["end"] = {"dateTime": fmt(end), "timeZone": ev.end.get("timeZone", tz)}
        out["originalStartTime"] = dict(out["start"])
        return out


def occurrences(ev: Event, lo: datetime | None, hi: datetime | None, limit: int) -> list[datetime]:
    """Start times of an event's occurrences overlapping [lo, hi) (the event itself when not recurring)."""
    from dateutil.rrule import rrulestr

    s0, e0 = event_time(ev.start, "start"), event_time(ev.end, "end")
    length = e0 - s0
    if not ev.recurrence:
        return [s0] if (lo is None or e0 > lo) and (hi is None or s0 < hi) else []
    text = "\n".join(r for r in ev.recurrence if r.upper().startswith(("RRULE", "EXDATE", "RDATE", "EXRULE")))
    try:
        rule = rrulestr(text, dtstart=s0, forceset=True, unfold=True)
    except (ValueError, TypeError):
        raise bad_request("Invalid recurrence rule.", "invalid", "recurrence") from None
    out: list[datetime] = []
    horizon = hi or (s0 + timedelta(days=366 * 2))
    for start in rule.xafter(max(lo - length, s0) if lo else s0, inc=True):
        if start.tzinfo is None:
            start = start.replace(tzinfo=timezone.utc)
        if start >= horizon or len(out) >= limit:
            break
        if lo is None or start + length > lo:
            out.append(start)
    return out


def parse_quick(text: str, now: datetime) -> tuple[str, datetime, datetime, bool]:
    """(summary, start, end, all_day) from text: a date (today, tomorrow, a weekday, 'March 12', 2026-03-12)
    and an optional time or time range; the words that are neither make the summary. Times are UTC."""
    from dateutil import parser as du

    base = now.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
    rest, end_time = text, None
    m = _RANGE.search(rest)
    if m:
        begin, end_time = m.group(1), m.group(2)
        meridiem = re.search(r"am|pm", end_time, re.I)
        if meridiem and not re.search(r"am|pm", begin, re.I):  # "2-3pm": the start shares the end's pm
            later = int(begin.split(":")[0]) % 12 > int(end_time.split(":")[0].strip("apmAPM ")) % 12
            begin = begin.strip() + ("am" if later and meridiem.group(0).lower() == "pm" else meridiem.group(0))
        rest = rest[:m.start()] + begin + rest[m.end():]
    rel = _RELATIVE.search(rest)
    if rel:
        base = base + timedelta(days=1 if rel.group(1).lower() == "tomorrow" else 0)
        rest = rest[:rel.start()] + rest[rel.end():]
    try:
        when, skipped = du.parse(rest, default=base, fuzzy_with_tokens=True)
        found = True
    except (ValueError, OverflowError):
        when, skipped, found = base, (rest,), False
    summary = re.sub(r"\s+", " ", " ".join(skipped)).strip(" ,.-")
    summary = re.sub(r"\b(on|at|from)$", "", summary).strip(" ,.-") or text.strip()
    has_time = found and bool(re.search(r"\d\s*(am|pm)\b|\d:\d\d", rest, re.I))
    start = when.replace(tzinfo=timezone.utc)
    if not has_time:
        return summary, start, start + timedelta(days=1), True
    end = start + timedelta(hours=1)
    if end_time:
        try:
            t = du.parse(end_time, default=start.replace(tzinfo=None))
            if not re.search(r"am|pm", end_time, re.I) and re.search(r"pm", m.group(1), re.I) and t.hour < 12:  # type: ignore[union-attr]
                t = t.replace(hour=t.hour + 12)
            end = t.replace(tzinfo=timezone.utc)
            if end <= start:
                end += timedelta(hours=12) if end + timedelta(hours=12) > start else timedelta(days=1)
        except (ValueError, OverflowError):
            pass
    return summary, start, end, False
