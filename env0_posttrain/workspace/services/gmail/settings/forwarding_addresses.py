"""Gmail v1 users.settings.forwardingAddresses: where mail may be forwarded (outside the company an address stays
pending verification); removing one turns off auto-forwarding to it."""

from __future__ import annotations

from typing import Any

from ....base import api
from ....errors import conflict, not_found
from ..data_model import ForwardingAddress, MailSetting
from .fields import S, SettingsBase


class ForwardingAddresses(SettingsBase):
    def _fwd_json(self, f: ForwardingAddress) -> dict[str, Any]:
        return {"forwardingEmail": f.forwardingEmail, "verificationStatus": f.verificationStatus}

    @api("gmail.users.settings.forwardingAddresses.list", f"GET {S}/forwardingAddresses",
         "List addresses mail may be forwarded to.")
    def settings_forwardingAddresses_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        rows = [self._fwd_json(f) for k, f in sorted(self.db.forwardingAddresses.items()) if f.userId == owner]
        return {"forwardingAddresses": rows} if rows else {}

    @api("gmail.users.settings.forwardingAddresses.get", f"GET {S}/forwardingAddresses/{{forwardingEmail}}",
         "Get a forwarding address.", params={"forwardingEmail": ""})
    def settings_forwardingAddresses_get(self, forwardingEmail: str, userId: str = "me") -> dict[str, Any]:
        f = self.db.forwardingAddresses.get(f"{self.owner(userId)}/{forwardingEmail.strip().lower()}")
        if f is None:
            raise not_found()
        return self._fwd_json(f)

    @api("gmail.users.settings.forwardingAddresses.create", f"POST {S}/forwardingAddresses",
         "Add a forwarding address (an address outside the company stays pending verification).", writes=True,
         params={"body": "{forwardingEmail}"})
    def settings_forwardingAddresses_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        email = self._email(body.get("forwardingEmail"), "forwardingEmail")
        if f"{owner}/{email}" in self.db.forwardingAddresses:
            raise conflict("Forwarding address already exists", "alreadyExists")
        f = ForwardingAddress(userId=owner, forwardingEmail=email, verificationStatus=self._status(email))
        self.db.forwardingAddresses[f"{owner}/{email}"] = f
        return self._fwd_json(f)

    @api("gmail.users.settings.forwardingAddresses.delete", f"DELETE {S}/forwardingAddresses/{{forwardingEmail}}",
         "Remove a forwarding address (and turn off auto-forwarding to it).", writes=True, status=204,
         params={"forwardingEmail": ""})
    def settings_forwardingAddresses_delete(self, forwardingEmail: str, userId: str = "me") -> None:
        owner = self.owner(userId)
        email = forwardingEmail.strip().lower()
        if self.db.forwardingAddresses.pop(f"{owner}/{email}", None) is None:
            raise not_found()
        auto = self.setting(owner, "autoForwarding")
        if auto.get("emailAddress") == email:
            self.db.mailSettings[f"{owner}/autoForwarding"] = MailSetting(userId=owner, name="autoForwarding",
                                                                          value={"enabled": False})

    def add_forwarding_address(self, email: str, owner: str | None = None, status: str | None = None) -> None:
        owner = owner or self.ws.me.email
        email = email.lower()
        self.db.forwardingAddresses[f"{owner}/{email}"] = ForwardingAddress(
            userId=owner, forwardingEmail=email, verificationStatus=status or self._status(email))
