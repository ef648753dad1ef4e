"""Calendar v3 freebusy.query: the busy intervals of calendars (and people, by their primary calendar)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import api
from ...errors import bad_request
from .times import fmt, parse_rfc3339

C = "calendar/v3"


class FreeBusyMixin:
    ws: Any
    db: Any
    cal_id: Any  # the Calendar's own helpers
    timeline: Any
    on_calendar: Any

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
        items = body.get("items") or []
        if not isinstance(items, list):
            raise bad_request("Invalid items.", "invalid")
        cals: dict[str, Any] = {}
        for it in items:
            cid = self.cal_id(str(it.get("id", ""))) if isinstance(it, dict) else ""
            if cid not in self.db.calendars:
                cals[cid] = {"errors": [{"domain": "global", "reason": "notFound"}], "busy": []}
                continue
            cals[cid] = {"busy": self.busy(cid, lo, hi)}
        return {"kind": "calendar#freeBusy", "timeMin": fmt(lo), "timeMax": fmt(hi), "calendars": cals}

    def busy(self, cal_id: str, lo: datetime, hi: datetime) -> list[dict[str, str]]:
        spans = []
        for s0, e0, e in self.timeline():
            if s0 >= hi:
                break
            if e0 <= lo or e.status == "cancelled" or e.transparency == "transparent" or "dateTime" not in e.start:
                continue
            if not self.on_calendar(e, cal_id):
                continue
            if e.calendarId != cal_id and any(a.email == cal_id and a.responseStatus == "declined" for a in e.attendees):
                continue
            s, en = max(s0, lo), min(e0, hi)
            if s < en:
                spans.append([s, en])
        spans.sort()
        merged: list[list[datetime]] = []
        for s, en in spans:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], en)
            else:
                merged.append([s, en])
        return [{"start": fmt(s), "end": fmt(en)} for s, en in merged]
