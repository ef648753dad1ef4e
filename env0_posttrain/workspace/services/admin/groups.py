"""Admin SDK Directory groups: list, get, insert and delete."""

from __future__ import annotations

from typing import Any

from ...base import HEX, api
from ...errors import bad_request, conflict
from ...paging import check_size
from .data_model import Group
from .render import group_json
from .state import _EMAIL, A, AdminState, _listing


class Groups(AdminState):
    @api("directory.groups.list", f"GET {A}/groups", "List groups (or a user's groups with userKey).",
         params={"userKey": "", "maxResults": "", "pageToken": ""}, name="admin_groups_list")
    def groups_list(self, customer: str | None = "my_customer", domain: str | None = None,
                    userKey: str | None = None, maxResults: int | None = None, pageToken: str | None = None,
                    query: str | None = None) -> dict[str, Any]:
        self._check_scope(customer if not userKey else None, domain)
        groups = sorted(self.db.groups.values(), key=lambda g: g.email)
        if userKey:
            uid = self._user(userKey).id
            groups = [g for g in groups if f"{g.id}/{uid}" in self.db.members]
        return _listing("admin#directory#groups", "groups", groups, lambda g: group_json(g, len(self._members(g.id))),
                        pageToken, check_size(maxResults, 200, 200, "maxResults"))

    @api("directory.groups.get", f"GET {A}/groups/{{groupKey}}", "Get a group.", params={"groupKey": "email or id"},
         name="admin_groups_get")
    def groups_get(self, groupKey: str) -> dict[str, Any]:
        g = self._group(groupKey)
        return group_json(g, len(self._members(g.id)))

    @api("directory.groups.insert", f"POST {A}/groups", "Create a group.", writes=True,
         params={"body": "{email, name, description}"}, name="admin_groups_insert")
    def groups_insert(self, body: dict) -> dict[str, Any]:
        email = str(body.get("email") or "").strip().lower()
        if not _EMAIL.match(email):
            raise bad_request("Invalid Input: email", "invalid")
        if any(g.email == email for g in self.db.groups.values()) or any(
                u.primaryEmail == email for u in self.db.users.values()):
            raise conflict("Entity already exists.", "duplicate")
        g = Group(id="0" + self.new_id("group", HEX, 14), email=email, name=str(body.get("name") or email.split("@")[0]),
                  description=str(body.get("description") or ""))
        self.db.groups[g.id] = g
        return group_json(g, 0)

    @api("directory.groups.delete", f"DELETE {A}/groups/{{groupKey}}", "Delete a group.", writes=True, status=204,
         params={"groupKey": ""}, name="admin_groups_delete")
    def groups_delete(self, groupKey: str) -> None:
        g = self._group(groupKey)
        del self.db.groups[g.id]
        for k in [k for k, m in self.db.members.items() if m.groupId == g.id]:
            del self.db.members[k]
