"""Calendar's safety-gate inputs: an event gone or cancelled (`event:<id>`), a calendar deleted (`calendar:<id>`), a
share revoked (`acl:<calendarId>/<ruleId>`); recipients: new attendees and the grantee of a new or widened share."""

from __future__ import annotations

from typing import Any

from ..safety import rows


def gates(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    gone, invited = set(), set()
    s, e = rows(start, "calendar", "events"), rows(end, "calendar", "events")
    for eid, ev in s.items():
        after = e.get(eid)
        if after is ev:
            continue
        if after is None or (after.status == "cancelled" and ev.status != "cancelled"):
            gone.add(f"event:{eid}")
    for eid, ev in e.items():
        before_ev = s.get(eid)
        if before_ev is ev:  # unchanged row: no new attendee
            continue
        before = {a.email.lower() for a in before_ev.attendees} if before_ev is not None else set()
        invited.update(a.email.lower() for a in ev.attendees if a.email.lower() not in before)
    s_cals, e_cals = rows(start, "calendar", "calendars"), rows(end, "calendar", "calendars")
    gone.update(f"calendar:{c}" for c in s_cals.keys() - e_cals.keys())
    s_acl, e_acl = rows(start, "calendar", "acl"), rows(end, "calendar", "acl")
    for k, rule in s_acl.items():
        after = e_acl.get(k)
        if after is not rule and (after is None or after.role == "none") and rule.role != "none":
            gone.add(f"acl:{k}")
    for k, rule in e_acl.items():  # a new or widened share hands the calendar's content to its grantee
        before_rule = s_acl.get(k)
        if before_rule is not rule and rule.role not in ("none", "freeBusyReader") and (
                before_rule is None or _ACL_RANK[rule.role] > _ACL_RANK[before_rule.role]):
            invited.add(rule.scopeValue or rule.id)
    return gone, invited


_ACL_RANK = {"none": 0, "freeBusyReader": 1, "reader": 2, "writer": 3, "owner": 4}
