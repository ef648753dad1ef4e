"""Admin SDK Directory tokens: the OAuth tokens a user granted to apps."""

from __future__ import annotations

from typing import Any

from ...base import api
from .render import token_json
from .state import A, AdminState


class Tokens(AdminState):
    @api("directory.tokens.list", f"GET {A}/users/{{userKey}}/tokens", "Third-party apps a user granted access.",
         params={"userKey": ""}, name="admin_tokens_list")
    def tokens_list(self, userKey: str) -> dict[str, Any]:
        return self._owned(self.db.tokens, userKey, "clientId", "admin#directory#tokenList", token_json)

    @api("directory.tokens.get", f"GET {A}/users/{{userKey}}/tokens/{{clientId}}", "Get one app grant.",
         params={"userKey": "", "clientId": ""}, name="admin_tokens_get")
    def tokens_get(self, userKey: str, clientId: str) -> dict[str, Any]:
        return token_json(self._owned_item(self.db.tokens, userKey, clientId, "clientId"))

    @api("directory.tokens.delete", f"DELETE {A}/users/{{userKey}}/tokens/{{clientId}}", "Revoke an app's access.",
         writes=True, status=204, params={"userKey": "", "clientId": ""}, name="admin_tokens_delete")
    def tokens_delete(self, userKey: str, clientId: str) -> None:
        self._owned_item(self.db.tokens, userKey, clientId, "clientId", pop=True)
