"""Calendar v3 acl.*: who may see or edit a calendar the agent user owns.

The owner's own rule ("user:<owner>", role owner) is implied by the calendar row and cannot be
changed or deleted (403 cannotChangeOwnAcl); every other rule is a row keyed "<calendarId>/<ruleId>".
"""

from __future__ import annotations

import re
from typing import Any

from ...base import api
from ...errors import bad_request, forbidden, not_found
from ...paging import check_size, page
from ..push_channels import CHANNEL_PARAMS
from .calendars import etag
from .data_model import AclRule, CalendarRow
from .state import CalendarState

C = "calendar/v3"
ACL_ROLES = ("none", "freeBusyReader", "reader", "writer", "owner")
SCOPES = ("default", "user", "group", "domain")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DOMAIN = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+$")


def render_rule(rule: AclRule) -> dict[str, Any]:
    scope: dict[str, Any] = {"type": rule.scopeType}
    if rule.scopeValue is not None:
        scope["value"] = rule.scopeValue
    return {"kind": "calendar#aclRule", "etag": etag(rule.canonical()), "id": rule.id, "scope": scope,
            "role": rule.role}


class AclMixin(CalendarState):

    def owner_rule(self, cal: CalendarRow) -> AclRule:
        return AclRule(calendarId=cal.id, id=f"user:{cal.owner}", scopeType="user", scopeValue=cal.owner, role="owner")

    def acl_of(self, calendar_id: str) -> list[AclRule]:
        """Every rule of a calendar, the owner's first (verifier helper; no access check)."""
        cal = self.db.calendars[self.cal_id(calendar_id)]
        rest = sorted((r for r in self.db.acl.values() if r.calendarId == cal.id), key=lambda r: r.id)
        return [self.owner_rule(cal), *rest]

    def _acl_cal(self, calendarId: str) -> CalendarRow:
        cal = self._cal(calendarId)
        if self.role(cal) != "owner":
            raise forbidden("You need to have owner access to this calendar.", "requiredAccessLevel")
        return cal

    def _rule(self, cal: CalendarRow, ruleId: str) -> AclRule:
        if ruleId == f"user:{cal.owner}":
            return self.owner_rule(cal)
        rule = self.db.acl.get(f"{cal.id}/{ruleId}")
        if rule is None:
            raise not_found("Not Found")
        return rule

    def _role(self, body: dict, required: bool) -> str | None:
        role = body.get("role")
        if role is None and not required:
            return None
        if role not in ACL_ROLES:
            raise bad_request("Invalid value for role." if role else "Missing role.",
                              "invalid" if role else "required", "role")
        return role

    def _scope(self, body: dict) -> tuple[str, str | None]:
        scope = body.get("scope")
        if not isinstance(scope, dict) or not scope.get("type"):
            raise bad_request("Missing scope type.", "required", "scope.type")
        kind, value = scope.get("type"), scope.get("value")
        if kind not in SCOPES:
            raise bad_request("Invalid scope type.", "invalid", "scope.type")
        if kind == "default":
            if value:
                raise bad_request("The scope value must be empty for the default scope.", "invalid", "scope.value")
            return kind, None
        if not isinstance(value, str) or not value.strip():
            raise bad_request("Missing scope value.", "required", "scope.value")
        value = value.strip().lower()
        if not (_DOMAIN if kind == "domain" else _EMAIL).match(value):
            raise bad_request("Invalid scope value.", "invalid", "scope.value")
        return kind, value

    def _put_rule(self, cal: CalendarRow, kind: str, value: str | None, role: str) -> AclRule:
        rid = "default" if kind == "default" else f"{kind}:{value}"
        if kind == "user" and value == cal.owner:
            raise forbidden("Cannot change your own access level.", "cannotChangeOwnAcl")
        rule = AclRule(calendarId=cal.id, id=rid, scopeType=kind, scopeValue=value, role=role)
        self.db.acl[f"{cal.id}/{rid}"] = rule
        return rule

    @api("calendar.acl.list", f"GET {C}/calendars/{{calendarId}}/acl", "List who can access a calendar you own.",
         params={"calendarId": "'primary' or a calendar id"})
    def acl_list(self, calendarId: str, maxResults: int | None = None, pageToken: str | None = None,
                 showDeleted: bool = False, syncToken: str | None = None) -> dict[str, Any]:
        cal = self._acl_cal(calendarId)
        rules = [r for r in self.acl_of(cal.id) if showDeleted or r.role != "none"]
        chunk, nxt = page([render_rule(r) for r in rules], pageToken, check_size(maxResults, 100, 250, "maxResults"))
        out: dict[str, Any] = {"kind": "calendar#acl", "etag": etag(*(r.canonical() for r in rules)), "items": chunk}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    @api("calendar.acl.get", f"GET {C}/calendars/{{calendarId}}/acl/{{ruleId}}", "Get one access rule.",
         params={"calendarId": "", "ruleId": "e.g. user:ann@example.com"})
    def acl_get(self, calendarId: str, ruleId: str) -> dict[str, Any]:
        cal = self._acl_cal(calendarId)
        return render_rule(self._rule(cal, ruleId))

    @api("calendar.acl.insert", f"POST {C}/calendars/{{calendarId}}/acl",
         "Share a calendar you own: body {role: freeBusyReader|reader|writer|owner, scope: {type: user|group|domain|default, value}}.",
         writes=True, params={"calendarId": "", "body": "AclRule: role, scope{type, value}", "sendNotifications": ""})
    def acl_insert(self, calendarId: str, body: dict, sendNotifications: bool = True) -> dict[str, Any]:
        cal = self._acl_cal(calendarId)
        role = self._role(body, True)
        kind, value = self._scope(body)
        return render_rule(self._put_rule(cal, kind, value, role or "none"))

    @api("calendar.acl.update", f"PUT {C}/calendars/{{calendarId}}/acl/{{ruleId}}",
         "Replace an access rule (the scope cannot change).", writes=True,
         params={"calendarId": "", "ruleId": "", "body": "AclRule: role, scope", "sendNotifications": ""})
    def acl_update(self, calendarId: str, ruleId: str, body: dict, sendNotifications: bool = True) -> dict[str, Any]:
        cal = self._acl_cal(calendarId)
        rule = self._rule(cal, ruleId)
        role = self._role(body, True)
        if "scope" in body and self._scope(body) != (rule.scopeType, rule.scopeValue):
            raise bad_request("The scope of a rule cannot be changed.", "invalid", "scope")
        return render_rule(self._put_rule(cal, rule.scopeType, rule.scopeValue, role or "none"))

    @api("calendar.acl.patch", f"PATCH {C}/calendars/{{calendarId}}/acl/{{ruleId}}",
         "Change the role of an access rule.", writes=True,
         params={"calendarId": "", "ruleId": "", "body": "{role}", "sendNotifications": ""})
    def acl_patch(self, calendarId: str, ruleId: str, body: dict, sendNotifications: bool = True) -> dict[str, Any]:
        cal = self._acl_cal(calendarId)
        rule = self._rule(cal, ruleId)
        role = self._role(body, False) or rule.role
        if "scope" in body and self._scope(body) != (rule.scopeType, rule.scopeValue):
            raise bad_request("The scope of a rule cannot be changed.", "invalid", "scope")
        return render_rule(self._put_rule(cal, rule.scopeType, rule.scopeValue, role))

    @api("calendar.acl.delete", f"DELETE {C}/calendars/{{calendarId}}/acl/{{ruleId}}",
         "Remove an access rule (stop sharing).", writes=True, status=204, params={"calendarId": "", "ruleId": ""})
    def acl_delete(self, calendarId: str, ruleId: str) -> None:
        cal = self._acl_cal(calendarId)
        rule = self._rule(cal, ruleId)
        if rule.role == "owner" and rule.scopeValue == cal.owner:
            raise forbidden("Cannot change your own access level.", "cannotChangeOwnAcl")
        del self.db.acl[f"{cal.id}/{rule.id}"]

    # -- seeding helper -------------------------------------------------------------------------
    def add_acl(self, calendar_id: str, *, role: str, scope_type: str = "user", value: str | None = None) -> AclRule:
        """Plant a sharing rule on a calendar (any owner; no access check)."""
        cal = self.db.calendars[self.cal_id(calendar_id)]
        if role not in ACL_ROLES or scope_type not in SCOPES:
            raise ValueError(f"bad ACL role/scope {role!r}/{scope_type!r}")
        rid = "default" if scope_type == "default" else f"{scope_type}:{value}"
        rule = AclRule(calendarId=cal.id, id=rid, scopeType=scope_type, scopeValue=value, role=role)
        self.db.acl[f"{cal.id}/{rid}"] = rule
        return rule

    @api("calendar.acl.watch", f"POST {C}/calendars/{{calendarId}}/acl/watch",
         "Watch a calendar's access rules for changes.", writes=True, params={"calendarId": "", **CHANNEL_PARAMS})
    def acl_watch(self, calendarId: str, body: dict) -> dict[str, Any]:
        cal = self._acl_cal(calendarId)
        return self.open_channel(body, f"https://www.googleapis.com/calendar/v3/calendars/{cal.id}/acl?alt=json")
