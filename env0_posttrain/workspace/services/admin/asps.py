"""Admin SDK Directory asps: a user's application-specific passwords."""

from __future__ import annotations

from typing import Any

from ...base import api
from .render import asp_json
from .state import A, AdminState


class Asps(AdminState):
    @api("directory.asps.list", f"GET {A}/users/{{userKey}}/asps", "A user's app passwords.",
         params={"userKey": ""}, name="admin_asps_list")
    def asps_list(self, userKey: str) -> dict[str, Any]:
        return self._owned(self.db.asps, userKey, "codeId", "admin#directory#aspList", asp_json)

    @api("directory.asps.get", f"GET {A}/users/{{userKey}}/asps/{{codeId}}", "Get one app password.",
         params={"userKey": "", "codeId": ""}, name="admin_asps_get")
    def asps_get(self, userKey: str, codeId: int) -> dict[str, Any]:
        return asp_json(self._owned_item(self.db.asps, userKey, codeId, "codeId"))

    @api("directory.asps.delete", f"DELETE {A}/users/{{userKey}}/asps/{{codeId}}", "Revoke an app password.",
         writes=True, status=204, params={"userKey": "", "codeId": ""}, name="admin_asps_delete")
    def asps_delete(self, userKey: str, codeId: int) -> None:
        self._owned_item(self.db.asps, userKey, codeId, "codeId", pop=True)
