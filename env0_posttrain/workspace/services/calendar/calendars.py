"""Calendar v3 calendars.* and calendarList.* (the agent user's list of calendars with their overrides).

A calendar is metadata shared by everyone; a calendarList entry is one user's view of it (colour,
summaryOverride, hidden). Deleting an entry hides a calendar from the list; deleting the calendar
removes it, its events and its ACL rules.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

from ...base import BASE32HEX, api
from ...errors import bad_request, forbidden, not_found
from ...paging import check_size, page
from .colors import CALENDAR_COLORS, default_color
from .data_model import CalendarRow, ListEntry

C = "calendar/v3"
ROLES = ("freeBusyReader", "reader", "writer", "owner")
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
_ENTRY_FIELDS = ("summaryOverride", "colorId", "backgroundColor", "foregroundColor", "hidden", "selected",
                 "defaultReminders")


@functools.lru_cache(maxsize=8192)
def etag(*parts: Any) -> str:
    """A stable etag: the same resource state gives the same etag in every process."""
    digest = hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return '"' + str(int.from_bytes(digest, "big") % 10**16).zfill(16) + '"'


class CalendarsMixin:
    """calendars.get/insert/update/patch/delete/clear and calendarList.list/get/insert/update/patch/delete."""

    ws: Any
    db: Any

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

    def render_entry(self, entry: ListEntry, cal: CalendarRow) -> dict[str, Any]:
        color = entry.colorId or default_color(cal.id)
        bg, fg = CALENDAR_COLORS[color] if color in CALENDAR_COLORS else (None, None)
        out: dict[str, Any] = {"kind": "calendar#calendarListEntry", "etag": etag(entry.canonical(), cal.canonical()),
                               "id": cal.id, "summary": cal.summary}
        if entry.summaryOverride:
            out["summaryOverride"] = entry.summaryOverride
        if cal.description:
            out["description"] = cal.description
        if cal.location:
            out["location"] = cal.location
        out["timeZone"] = cal.timeZone
        if cal.id != cal.owner:
            out["dataOwner"] = cal.owner
        out["colorId"] = color
        out["backgroundColor"] = entry.backgroundColor or bg
        out["foregroundColor"] = entry.foregroundColor or fg
        if entry.hidden:
            out["hidden"] = True
        if entry.selected:
            out["selected"] = True
        out["accessRole"] = self.role(cal)  # type: ignore[attr-defined]
        out["defaultReminders"] = [dict(r) for r in entry.defaultReminders]
        if cal.id == self.ws.me.email:
            out["notificationSettings"] = {"notifications": [
                {"type": t, "method": "email"} for t in ("eventCreation", "eventChange", "eventCancellation",
                                                          "eventResponse")]}
            out["primary"] = True
        out["conferenceProperties"] = {"allowedConferenceSolutionTypes": ["hangoutsMeet"]}
        return out

    def _owned(self, calendarId: str) -> CalendarRow:
        cal = self._cal(calendarId)  # type: ignore[attr-defined]
        if self.role(cal) != "owner":  # type: ignore[attr-defined]
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
        return self.render_calendar(self._cal(calendarId))  # type: ignore[attr-defined]

    @api("calendar.calendars.insert", f"POST {C}/calendars",
         "Create a secondary calendar you own. body: summary, description, location, timeZone.", writes=True,
         params={"body": "Calendar: summary (required), description, location, timeZone"})
    def calendars_insert(self, body: dict) -> dict[str, Any]:
        fields = self._calendar_fields(body, None, True)
        cid = self.new_id("calendar", BASE32HEX, 26) + "@group.calendar.google.com"  # type: ignore[attr-defined]
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
            self.save(e.model_copy(update={"status": "cancelled", "updated": now,  # type: ignore[attr-defined]
                                           "sequence": e.sequence + 1}))

    # -- calendarList ---------------------------------------------------------------------------
    @api("calendar.calendarList.list", f"GET {C}/users/me/calendarList", "List the calendars in your calendar list.",
         params={"minAccessRole": "freeBusyReader|reader|writer|owner", "showHidden": ""})
    def calendarList_list(self, maxResults: int | None = None, pageToken: str | None = None,
                          minAccessRole: str | None = None, showHidden: bool = False, showDeleted: bool = False,
                          showOwnOrganizationOnly: bool = False) -> dict[str, Any]:
        if minAccessRole is not None and minAccessRole not in ROLES:
            raise bad_request(f"Invalid value for minAccessRole: {minAccessRole}", "invalid", "minAccessRole")
        floor = ROLES.index(minAccessRole) if minAccessRole else 0
        me = self.ws.me.email
        items = []
        for entry in sorted(self.db.calendarList.values(), key=lambda x: (x.id != me, x.id)):
            cal = self.db.calendars.get(entry.id)
            if cal is None or (entry.hidden and not showHidden):
                continue
            if ROLES.index(self.role(cal)) < max(floor, 1):  # type: ignore[attr-defined]
                continue
            items.append(self.render_entry(entry, cal))
        chunk, nxt = page(items, pageToken, check_size(maxResults, 100, 250, "maxResults"))
        out: dict[str, Any] = {"kind": "calendar#calendarList", "etag": etag(len(items), self.db.calendarList.version),
                               "items": chunk}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def _entry(self, calendarId: str) -> tuple[ListEntry, CalendarRow]:
        cid = self.cal_id(calendarId)  # type: ignore[attr-defined]
        entry, cal = self.db.calendarList.get(cid), self.db.calendars.get(cid)
        if entry is None or cal is None:
            raise not_found("Not Found")
        return entry, cal

    def _entry_fields(self, body: dict, colorRgbFormat: bool, full: bool) -> dict[str, Any]:
        upd: dict[str, Any] = {}
        for k in _ENTRY_FIELDS:
            if k not in body and not full:
                continue
            v = body.get(k)
            if k == "colorId" and v is not None and str(v) not in CALENDAR_COLORS:
                raise bad_request("Invalid value for colorId.", "invalid", "colorId")
            if k in ("backgroundColor", "foregroundColor") and v is not None:
                if not colorRgbFormat:
                    raise bad_request("colorRgbFormat must be true to set RGB colours.", "invalid", k)
                if not isinstance(v, str) or not _HEX.match(v):
                    raise bad_request(f"Invalid value for {k}.", "invalid", k)
            if k in ("hidden", "selected") and v is not None and not isinstance(v, bool):
                raise bad_request(f"Invalid value for {k}.", "invalid", k)
            if k == "defaultReminders":
                v = _reminders(v)
            elif k == "colorId" and v is not None:
                v = str(v)
            elif k == "summaryOverride" and v is not None and not isinstance(v, str):
                raise bad_request("Invalid value for summaryOverride.", "invalid", k)
            if k in ("hidden", "selected") and v is None:
                v = k == "selected"
            upd[k] = v
        if upd.get("backgroundColor") or upd.get("foregroundColor"):
            upd.setdefault("colorId", None)
        return upd

    @api("calendar.calendarList.get", f"GET {C}/users/me/calendarList/{{calendarId}}",
         "Get one calendar's entry in your calendar list.", params={"calendarId": ""})
    def calendarList_get(self, calendarId: str) -> dict[str, Any]:
        entry, cal = self._entry(calendarId)
        return self.render_entry(entry, cal)

    @api("calendar.calendarList.insert", f"POST {C}/users/me/calendarList",
         "Add an existing calendar you can read to your calendar list. body: id, colorId, summaryOverride, hidden.",
         writes=True, params={"body": "CalendarListEntry with id (required)", "colorRgbFormat": ""})
    def calendarList_insert(self, body: dict, colorRgbFormat: bool = False) -> dict[str, Any]:
        cid = body.get("id")
        if not isinstance(cid, str) or not cid:
            raise bad_request("Required parameter: id", "required", "id")
        cal = self._cal(cid)  # type: ignore[attr-defined]  # 404 unless the user can read it
        prev = self.db.calendarList.get(cal.id) or ListEntry(id=cal.id)
        entry = prev.model_copy(update=self._entry_fields(body, colorRgbFormat, False))
        self.db.calendarList[cal.id] = entry
        return self.render_entry(entry, cal)

    @api("calendar.calendarList.update", f"PUT {C}/users/me/calendarList/{{calendarId}}",
         "Replace your settings for a calendar in your list (fields left out are reset).", writes=True,
         params={"calendarId": "", "body": "CalendarListEntry", "colorRgbFormat": ""})
    def calendarList_update(self, calendarId: str, body: dict, colorRgbFormat: bool = False) -> dict[str, Any]:
        entry, cal = self._entry(calendarId)
        entry = entry.model_copy(update=self._entry_fields(body, colorRgbFormat, True))
        self.db.calendarList[cal.id] = entry
        return self.render_entry(entry, cal)

    @api("calendar.calendarList.patch", f"PATCH {C}/users/me/calendarList/{{calendarId}}",
         "Change your settings for a calendar in your list (colorId, summaryOverride, hidden, selected).",
         writes=True, params={"calendarId": "", "body": "CalendarListEntry fields to change", "colorRgbFormat": ""})
    def calendarList_patch(self, calendarId: str, body: dict, colorRgbFormat: bool = False) -> dict[str, Any]:
        entry, cal = self._entry(calendarId)
        entry = entry.model_copy(update=self._entry_fields(body, colorRgbFormat, False))
        self.db.calendarList[cal.id] = entry
        return self.render_entry(entry, cal)

    @api("calendar.calendarList.delete", f"DELETE {C}/users/me/calendarList/{{calendarId}}",
         "Remove a calendar from your calendar list (the calendar itself stays).", writes=True, status=204,
         params={"calendarId": ""})
    def calendarList_delete(self, calendarId: str) -> None:
        entry, cal = self._entry(calendarId)
        if cal.id == self.ws.me.email:
            raise bad_request("Invalid Value", "invalid", "calendarId")  # the primary calendar stays in the list
        del self.db.calendarList[entry.id]


def _reminders(v: Any) -> tuple[dict[str, Any], ...]:
    if v is None:
        return ()
    if not isinstance(v, list):
        raise bad_request("Invalid value for defaultReminders.", "invalid", "defaultReminders")
    out = []
    for r in v:
        if (not isinstance(r, dict) or r.get("method") not in ("email", "popup")
                or not isinstance(r.get("minutes"), int) or isinstance(r.get("minutes"), bool)
                or not 0 <= r["minutes"] <= 40320):
            raise bad_request("Invalid value for defaultReminders.", "invalid", "defaultReminders")
        out.append({"method": r["method"], "minutes": r["minutes"]})
    return tuple(out)


def _valid_tz(tz: str) -> bool:
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(tz)
    except Exception:  # ZoneInfo raises several types for malformed keys
        return False
    return True
