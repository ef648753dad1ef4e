"""Calendar v3 calendars.*.

A calendar is metadata shared by everyone; a calendarList entry (calendar_list.py) is one user's view of it
(colour, summaryOverride, hidden). Deleting the calendar removes it, its events and its ACL rules.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from ...base import BASE32HEX, api
from ...errors import bad_request, forbidden
from .data_model import CalendarRow, ListEntry
from .state import CalendarState

C = "calendar/v3"


@functools.lru_cache(maxsize=8192)
def etag(*parts: Any) -> str:
    """A stable etag: the same resource state gives the same etag in every process."""
    digest = hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return '"' + str(int.from_bytes(digest, "big") % 10**16).zfill(16) + '"'


class CalendarsMixin(CalendarState):
    """calendars.get/insert/update/patch/delete/clear."""

    # -- rendering ------------------------------------------------------------------------------
    def render_calendar(self, cal: CalendarRow) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "calendar#calendar", "etag": etag(cal.canonical()), "id": cal.id,
                               "summary": cal.summary}
        if cal.description:
            out["description"] = cal.description
        if cal.location:
            out["location"] = cal.location
        out["timeZone"] = cal.timeZone
        if cal.id != cal.owner:  # secondary calendars name their owner
            out["dataOwner"] = cal.owner
        out["conferenceProperties"] = {"allowedConferenceSolutionTypes": ["hangoutsMeet"]}
        return out

    def _owned(self, calendarId: str) -> CalendarRow:
        cal = self._cal(calendarId)
        if self.role(cal) != "owner":
            raise forbidden("You need to have owner access to this calendar.", "requiredAccessLevel")
        return cal

    def _calendar_fields(self, body: dict, cal: CalendarRow | None, full: bool) -> dict[str, Any]:
        """Validated calendar fields from a body; full (insert/update) resets what the body leaves out."""
        upd: dict[str, Any] = {}
        if full or "summary" in body:
            summary = body.get("summary")
            if not isinstance(summary, str) or not summary.strip():
                raise bad_request("Missing title.", "required", "summary")
            upd["summary"] = summary
        for k in ("description", "location"):
            if full or k in body:
                v = body.get(k)
                if v is not None and not isinstance(v, str):
                    raise bad_request(f"Invalid value for {k}.", "invalid", k)
                upd[k] = v or None
        if full or "timeZone" in body:
            tz = body.get("timeZone") or (cal.timeZone if cal else self.my_timezone())
            if not isinstance(tz, str) or not _valid_tz(tz):
                raise bad_request("Invalid time zone definition.", "invalid", "timeZone")
            upd["timeZone"] = tz
        return upd

    def my_timezone(self) -> str:
        row = self.db.settings.get("timezone")
        return row.value if row else "UTC"

    # -- calendars ------------------------------------------------------------------------------
    @api("calendar.calendars.get", f"GET {C}/calendars/{{calendarId}}", "Get a calendar's metadata.",
         params={"calendarId": "'primary' or a calendar id"})
    def calendars_get(self, calendarId: str) -> dict[str, Any]:
        return self.render_calendar(self._cal(calendarId))

    @api("calendar.calendars.insert", f"POST {C}/calendars",
         "Create a secondary calendar you own. body: summary, description, location, timeZone.", writes=True,
         params={"body": "Calendar: summary (required), description, location, timeZone"})
    def calendars_insert(self, body: dict) -> dict[str, Any]:
        fields = self._calendar_fields(body, None, True)
        cid = self.new_id("calendar", BASE32HEX, 26) + "@group.calendar.google.com"
        cal = CalendarRow(id=cid, owner=self.ws.me.email, **fields)
        self.db.calendars[cid] = cal
        self.db.calendarList[cid] = ListEntry(id=cid)
        return self.render_calendar(cal)

    @api("calendar.calendars.update", f"PUT {C}/calendars/{{calendarId}}",
         "Replace a calendar's metadata (fields left out are cleared).", writes=True,
         params={"calendarId": "", "body": "Calendar: summary (required), description, location, timeZone"})
    def calendars_update(self, calendarId: str, body: dict) -> dict[str, Any]:
        cal = self._owned(calendarId)
        cal = cal.model_copy(update=self._calendar_fields(body, cal, True))
        self.db.calendars[cal.id] = cal
        return self.render_calendar(cal)

    @api("calendar.calendars.patch", f"PATCH {C}/calendars/{{calendarId}}",
         "Change some of a calendar's metadata.", writes=True,
         params={"calendarId": "", "body": "Calendar fields to change"})
    def calendars_patch(self, calendarId: str, body: dict) -> dict[str, Any]:
        cal = self._owned(calendarId)
        cal = cal.model_copy(update=self._calendar_fields(body, cal, False))
        self.db.calendars[cal.id] = cal
        return self.render_calendar(cal)

    @api("calendar.calendars.delete", f"DELETE {C}/calendars/{{calendarId}}",
         "Delete a secondary calendar you own, with its events (use calendars.clear for the primary).",
         writes=True, status=204, params={"calendarId": ""})
    def calendars_delete(self, calendarId: str) -> None:
        cal = self._owned(calendarId)
        if cal.id == self.ws.me.email:
            raise bad_request("Invalid Value", "invalid", "calendarId")  # the primary calendar can only be cleared
        for eid in [e.id for e in self.db.events.values() if e.calendarId == cal.id]:
            del self.db.events[eid]
        for rid in [k for k, r in self.db.acl.items() if r.calendarId == cal.id]:
            del self.db.acl[rid]
        self.db.calendarList.pop(cal.id, None)
        del self.db.calendars[cal.id]

    @api("calendar.calendars.clear", f"POST {C}/calendars/{{calendarId}}/clear",
         "Delete every event of your primary calendar.", writes=True, status=204, params={"calendarId": "'primary'"})
    def calendars_clear(self, calendarId: str) -> None:
        cal = self._owned(calendarId)
        if cal.id != self.ws.me.email:
            raise bad_request("Invalid Value", "invalid", "calendarId")  # only the primary calendar can be cleared
        now = self.ws.now_rfc3339()
        for e in [e for e in self.db.events.values() if e.calendarId == cal.id and e.status != "cancelled"]:
            self.save(e.model_copy(update={"status": "cancelled", "updated": now,
                                           "sequence": e.sequence + 1}))


def _valid_tz(tz: str) -> bool:
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(tz)
    except Exception:  # ZoneInfo raises several types for malformed keys
        return False
    return True
