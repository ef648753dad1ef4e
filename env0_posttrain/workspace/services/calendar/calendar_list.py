"""Calendar v3 calendarList: the agent user's entries for the calendars they see (colour, reminders,
summaryOverride, hidden), and its watch. Deleting an entry hides a calendar from the list."""

from __future__ import annotations

import re
from typing import Any

from ...base import api
from ...errors import bad_request, not_found
from ...paging import check_size, page
from ..push_channels import CHANNEL_PARAMS
from .calendars import etag
from .colors import CALENDAR_COLORS, default_color
from .data_model import CalendarRow, ListEntry
from .state import CalendarState

C = "calendar/v3"

ROLES = ("freeBusyReader", "reader", "writer", "owner")
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
_ENTRY_FIELDS = ("summaryOverride", "colorId", "backgroundColor", "foregroundColor", "hidden", "selected",
                 "defaultReminders")


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


class CalendarListMixin(CalendarState):

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
        out["accessRole"] = self.role(cal)
        out["defaultReminders"] = [dict(r) for r in entry.defaultReminders]
        if cal.id == self.ws.me.email:
            out["notificationSettings"] = {"notifications": [
                {"type": t, "method": "email"} for t in ("eventCreation", "eventChange", "eventCancellation",
                                                          "eventResponse")]}
            out["primary"] = True
        out["conferenceProperties"] = {"allowedConferenceSolutionTypes": ["hangoutsMeet"]}
        return out

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
            if ROLES.index(self.role(cal)) < max(floor, 1):
                continue
            items.append(self.render_entry(entry, cal))
        chunk, nxt = page(items, pageToken, check_size(maxResults, 100, 250, "maxResults"))
        out: dict[str, Any] = {"kind": "calendar#calendarList", "etag": etag(len(items), self.db.calendarList.version),
                               "items": chunk}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def _entry(self, calendarId: str) -> tuple[ListEntry, CalendarRow]:
        cid = self.cal_id(calendarId)
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
        cal = self._cal(cid)  # 404 unless the user can read it
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

    @api("calendar.calendarList.watch", f"POST {C}/users/me/calendarList/watch",
         "Watch your calendar list for changes.", writes=True, params=dict(CHANNEL_PARAMS))
    def calendarList_watch(self, body: dict) -> dict[str, Any]:
        return self.open_channel(body, "https://www.googleapis.com/calendar/v3/users/me/calendarList?alt=json")
