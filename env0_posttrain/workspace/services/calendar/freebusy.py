"""Calendar v3 freebusy.query: the busy intervals of calendars (and people, by their primary calendar), keyed by
the ids as asked ("primary" stays "primary"), occurrences of recurring events included, times in the request's
`timeZone` (UTC by default, as Calendar answers)."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any

from ...base import api
from ...errors import bad_request
from . import recurrence
from .data_model import Event
from .state import CalendarState
from .times import UTC, event_time, local, parse_rfc3339, zone

C = "calendar/v3"


class FreeBusyMixin(CalendarState):
    cal_id: Any  # the Calendar's own helpers

    @api("calendar.freebusy.query", f"POST {C}/freeBusy", "Busy intervals of people/calendars in a time range.",
         params={"body": "{timeMin, timeMax, items: [{id: email}]}"})
    def freebusy_query(self, body: dict) -> dict[str, Any]:
        if not body.get("timeMin"):
            raise bad_request("Missing timeMin parameter.", "required")
        if not body.get("timeMax"):
            raise bad_request("Missing timeMax parameter.", "required")
        lo, hi = parse_rfc3339(str(body["timeMin"]), "timeMin"), parse_rfc3339(str(body["timeMax"]), "timeMax")
        if hi < lo:
            raise bad_request("The specified time range is empty.", "timeRangeEmpty")
        tz = zone(body["timeZone"], "Invalid time zone definition.", "timeZone") if body.get("timeZone") else UTC
        items = body.get("items") or []
        if not isinstance(items, list):
            raise bad_request("Invalid items.", "invalid")
        cals: dict[str, Any] = {}
        for it in items:
            asked = str(it.get("id", "")) if isinstance(it, dict) else ""
            cid = self.cal_id(asked)
            if cid not in self.db.calendars:
                cals[asked] = {"errors": [{"domain": "global", "reason": "notFound"}], "busy": []}
                continue
            cals[asked] = {"busy": self.busy(cid, lo, hi, tz)}
        return {"kind": "calendar#freeBusy", "timeMin": local(lo, tz), "timeMax": local(hi, tz), "calendars": cals}

    def _blocks(self, e: Event, cal_id: str) -> bool:
        """Whether an event makes `cal_id` busy: a timed, opaque, not cancelled event on it, not declined there."""
        if e.status == "cancelled" or e.transparency == "transparent" or "dateTime" not in e.start:
            return False
        if not self.on_calendar(e, cal_id):
            return False
        return e.calendarId == cal_id or not any(a.email == cal_id and a.responseStatus == "declined"
                                                 for a in e.attendees)

    def busy(self, cal_id: str, lo: datetime, hi: datetime, tz: tzinfo = UTC) -> list[dict[str, str]]:
        spans = []
        for s0, e0, e in self.timeline():
            if s0 >= hi:
                break
            if e.recurrence or e0 <= lo or not self._blocks(e, cal_id):
                continue
            spans.append([max(s0, lo), min(e0, hi)])
        for e in self.series():
            if e.status == "cancelled" or not (self.on_calendar(e, cal_id) or any(
                    self.on_calendar(x, cal_id) for x in (e.exceptions or {}).values())):
                continue
            for x in recurrence.instances(e, self.series_zone(e), lo, hi, self.ws.now):
                if self._blocks(x, cal_id):
                    spans.append([max(event_time(x.start, "start"), lo), min(event_time(x.end, "end"), hi)])
        spans = sorted(s for s in spans if s[0] < s[1])
        merged: list[list[datetime]] = []
        for s, en in spans:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], en)
            else:
                merged.append([s, en])
        return [{"start": local(s, tz), "end": local(en, tz)} for s, en in merged]
