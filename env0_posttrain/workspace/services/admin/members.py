"""Admin SDK Directory members: a group's members and their roles."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import ApiError, bad_request, conflict
from ...paging import check_size
from .data_model import Group, Member
from .render import member_json
from .state import A, AdminState, _listing, _missing

_ROLES = ("OWNER", "MANAGER", "MEMBER")


class Members(AdminState):
    @api("directory.members.list", f"GET {A}/groups/{{groupKey}}/members", "List a group's members.",
         params={"groupKey": ""}, name="admin_members_list")
    def members_list(self, groupKey: str, roles: str | None = None, maxResults: int | None = None,
                     pageToken: str | None = None) -> dict[str, Any]:
        g = self._group(groupKey)
        want = {r.strip().upper() for r in roles.split(",")} if roles else None
        ms = sorted((m for m in self._members(g.id) if not want or m.role in want), key=lambda m: m.email)
        return _listing("admin#directory#members", "members", ms, member_json, pageToken,
                        check_size(maxResults, 200, 200, "maxResults"))

    @api("directory.members.insert", f"POST {A}/groups/{{groupKey}}/members", "Add a member to a group.",
         writes=True, params={"groupKey": "", "body": "{email, role: MEMBER|MANAGER|OWNER}"},
         name="admin_members_insert")
    def members_insert(self, groupKey: str, body: dict) -> dict[str, Any]:
        g = self._group(groupKey)
        role = str(body.get("role") or "MEMBER").upper()
        if role not in _ROLES:
            raise bad_request("Invalid Input: role", "invalid")
        email = str(body.get("email") or body.get("id") or "").strip().lower()
        if not email:
            raise bad_request("Missing required field: memberKey", "required")
        try:
            u = self._user(email)
            mid, memail, mtype = u.id, u.primaryEmail, "USER"
        except Exception:
            sub = next((x for x in self.db.groups.values() if x.email == email and x.id != g.id), None)
            if sub is None:
                raise _missing("memberKey") from None
            mid, memail, mtype = sub.id, sub.email, "GROUP"
        if f"{g.id}/{mid}" in self.db.members:
            raise conflict("Member already exists.", "duplicate")
        m = Member(groupId=g.id, id=mid, email=memail, role=role, type=mtype)
        self.db.members[f"{g.id}/{mid}"] = m
        return member_json(m)

    def _member(self, g: Group, memberKey: str) -> Member:
        key = memberKey.strip().lower()
        m = next((m for m in self._members(g.id) if m.id == memberKey or m.email == key), None)
        if m is None:
            raise _missing("memberKey")
        return m

    @api("directory.members.get", f"GET {A}/groups/{{groupKey}}/members/{{memberKey}}", "Get one membership.",
         params={"groupKey": "", "memberKey": ""}, name="admin_members_get")
    def members_get(self, groupKey: str, memberKey: str) -> dict[str, Any]:
        return member_json(self._member(self._group(groupKey), memberKey))

    @api("directory.members.hasMember", f"GET {A}/groups/{{groupKey}}/hasMember/{{memberKey}}",
         "Whether a user is a member of a group, directly or through a nested group.",
         params={"groupKey": "", "memberKey": "the user's email or id"}, name="admin_members_hasMember")
    def members_hasMember(self, groupKey: str, memberKey: str) -> dict[str, Any]:
        g = self._group(groupKey)
        try:
            uid = self._user(memberKey).id
        except ApiError:  # hasMember takes users only: a group or an unknown address is not a member key
            raise _missing("memberKey") from None
        seen, todo = {g.id}, [g.id]
        while todo:  # nested groups, each visited once (a cycle of groups ends)
            for m in self._members(todo.pop()):
                if m.id == uid:
                    return {"isMember": True}
                if m.type == "GROUP" and m.id not in seen:
                    seen.add(m.id)
                    todo.append(m.id)
        return {"isMember": False}

    @api("directory.members.delete", f"DELETE {A}/groups/{{groupKey}}/members/{{memberKey}}",
         "Remove a member from a group.", writes=True, status=204, params={"groupKey": "", "memberKey": ""},
         name="admin_members_delete")
    def members_delete(self, groupKey: str, memberKey: str) -> None:
        g = self._group(groupKey)
        m = self._member(g, memberKey)
        del self.db.members[f"{g.id}/{m.id}"]
