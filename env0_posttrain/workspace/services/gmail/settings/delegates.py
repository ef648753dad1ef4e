"""Gmail v1 users.settings.delegates: colleagues (same company only) who may read, send and delete a mailbox's
mail."""

from __future__ import annotations

from typing import Any

from ....base import api
from ....errors import bad_request, conflict, not_found
from ..data_model import Delegate
from .fields import S, SettingsBase


class Delegates(SettingsBase):
    @api("gmail.users.settings.delegates.list", f"GET {S}/delegates", "List who may read and send as you.")
    def settings_delegates_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        rows = [{"delegateEmail": d.delegateEmail, "verificationStatus": d.verificationStatus}
                for k, d in sorted(self.db.delegates.items()) if d.userId == owner]
        return {"delegates": rows} if rows else {}

    @api("gmail.users.settings.delegates.get", f"GET {S}/delegates/{{delegateEmail}}", "Get a delegate.",
         params={"delegateEmail": ""})
    def settings_delegates_get(self, delegateEmail: str, userId: str = "me") -> dict[str, Any]:
        d = self.db.delegates.get(f"{self.owner(userId)}/{delegateEmail.strip().lower()}")
        if d is None:
            raise not_found()
        return {"delegateEmail": d.delegateEmail, "verificationStatus": d.verificationStatus}

    @api("gmail.users.settings.delegates.create", f"POST {S}/delegates",
         "Let a colleague (same company) read, send and delete your mail.", writes=True,
         params={"body": "{delegateEmail}"})
    def settings_delegates_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        email = self._email(body.get("delegateEmail"), "delegateEmail")
        if email == owner or self.ws.person(email) is None:
            raise bad_request("Invalid delegate: the delegate must be another user in your organization",
                              "invalidArgument")
        if f"{owner}/{email}" in self.db.delegates:
            raise conflict("Delegate already exists", "alreadyExists")
        self.db.delegates[f"{owner}/{email}"] = Delegate(userId=owner, delegateEmail=email)
        return {"delegateEmail": email, "verificationStatus": "accepted"}

    @api("gmail.users.settings.delegates.delete", f"DELETE {S}/delegates/{{delegateEmail}}", "Remove a delegate.",
         writes=True, status=204, params={"delegateEmail": ""})
    def settings_delegates_delete(self, delegateEmail: str, userId: str = "me") -> None:
        if self.db.delegates.pop(f"{self.owner(userId)}/{delegateEmail.strip().lower()}", None) is None:
            raise not_found()
