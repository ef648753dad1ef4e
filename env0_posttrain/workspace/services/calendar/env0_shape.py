"""Our Calendar rows in env0's mock-gcal /_admin/state and /_admin/diff JSON (calendars, ACLs and events per user); a
changed row is reported whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..env0_shapes import diff_rows, iso, now_iso

if TYPE_CHECKING:
    from ...environment import Workspace


def calendar_state(ws: Workspace) -> dict[str, Any]:
    me = ws.me.email
    events = []
    for e in ws.calendar.db.events.values():
        if not ws.calendar.on_calendar(e, me) or e.status == "cancelled":
            continue  # Calendar keeps a deleted event as status "cancelled"; env0 removes the row
        # env0 keeps a date-time as naive UTC (the stored instant, read in UTC, without an offset)
        start, end = iso(e.start.get("dateTime")) or e.start.get("date"), iso(e.end.get("dateTime")) or e.end.get("date")
        events.append({"id": e.id, "calendarId": "primary" if e.calendarId == me else e.calendarId,
                       "summary": e.summary, "description": e.description, "location": e.location, "status": e.status,
                       "start": start, "end": end, "startIsDate": "date" in e.start, "endIsDate": "date" in e.end,
                       "attendees": [a.dump() for a in e.attendees], "iCalUID": f"{e.id}@google.com",
                       "sequence": e.sequence, "recurrence": list(e.recurrence) if e.recurrence else None,
                       "created": e.created, "updated": e.updated})
    cals = [{"id": "primary" if c.id == me else c.id, "summary": c.summary, "description": c.description,
             "timeZone": c.timeZone, "accessRole": "owner" if c.owner == me else (c.meRole or "freeBusyReader"),
             "primary": c.id == me} for c in ws.calendar.db.calendars.values()
            if c.owner == me or c.meRole]
    owned = {c.id for c in ws.calendar.db.calendars.values() if c.owner == me}
    acls = [{"id": f"{r.calendarId}:{r.id}", "calendarId": "primary" if r.calendarId == me else r.calendarId,
             "scopeType": r.scopeType, "scopeValue": r.scopeValue, "role": r.role}
            for _, r in sorted(ws.calendar.db.acl.items()) if r.calendarId in owned]
    user = {"user": {"id": "user1", "email": me, "displayName": ws.me.name, "timezone": "UTC", "historyId": 1},
            "calendars": cals, "acls": acls, "events": events}
    return {"users": {"user1": user}, "timestamp": now_iso(ws)}


def calendar_diff(old: dict, cur: dict) -> dict:
    out: dict[str, dict] = {"users": {}}
    for uid in sorted(set(old["users"]) | set(cur["users"])):
        o, c = old["users"].get(uid, {}), cur["users"].get(uid, {})
        out["users"][uid] = {k: diff_rows(o.get(k, []), c.get(k, []), updated="full") for k in ("calendars", "acls", "events")}
    return out

