"""Gmail v1 users.settings.sendAs: the addresses a mailbox sends as, with signatures; the primary address always
exists and cannot be removed, and only a verified alias can become the default."""

from __future__ import annotations

from typing import Any

from ....base import api
from ....errors import bad_request, conflict, not_found
from ..data_model import SendAs
from .fields import S, SettingsBase, check_fields


class SendAsAliases(SettingsBase):
    def _send_as(self, owner: str, email: str) -> SendAs:
        row = self.db.sendAs.get(f"{owner}/{email.strip().lower()}")
        if row is None and email.strip().lower() == owner:
            person = self.ws.person(owner)
            row = SendAs(userId=owner, sendAsEmail=owner, displayName=person.name if person else "", treatAsAlias=False)
        if row is None:
            raise not_found()
        return row

    def _send_as_json(self, s: SendAs) -> dict[str, Any]:
        primary = s.sendAsEmail == s.userId
        default = s.isDefault or (primary and not any(r.isDefault for r in self.db.sendAs.values()
                                                      if r.userId == s.userId and r.sendAsEmail != s.userId))
        out = {"sendAsEmail": s.sendAsEmail, "displayName": s.displayName, "replyToAddress": s.replyToAddress or "",
               "signature": s.signature, "isPrimary": primary, "isDefault": default}
        if not primary:
            out.update(treatAsAlias=s.treatAsAlias, verificationStatus=s.verificationStatus)
        return out

    @api("gmail.users.settings.sendAs.list", f"GET {S}/sendAs", "List the addresses you can send as (with signatures).")
    def settings_sendAs_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        rows = [self._send_as(owner, owner)] + [r for k, r in sorted(self.db.sendAs.items())
                                                if r.userId == owner and r.sendAsEmail != owner]
        return {"sendAs": [self._send_as_json(r) for r in rows]}

    @api("gmail.users.settings.sendAs.get", f"GET {S}/sendAs/{{sendAsEmail}}", "Get a send-as address.",
         params={"sendAsEmail": ""})
    def settings_sendAs_get(self, sendAsEmail: str, userId: str = "me") -> dict[str, Any]:
        return self._send_as_json(self._send_as(self.owner(userId), sendAsEmail))

    def _put_send_as(self, owner: str, row: SendAs, body: dict) -> dict[str, Any]:
        upd = check_fields("sendAs", {k: v for k, v in body.items() if k not in ("sendAsEmail", "isPrimary",
                                                                            "verificationStatus", "smtpMsa")},
                     {"displayName": str, "replyToAddress": str, "signature": str, "isDefault": bool,
                      "treatAsAlias": bool})
        if upd.get("isDefault") is False and row.isDefault:
            raise bad_request("Cannot unset isDefault; make another address the default", "invalidArgument")
        if upd.get("isDefault"):
            if row.verificationStatus != "accepted":
                raise bad_request("Send-as address is not verified", "failedPrecondition")
            for k, r in list(self.db.sendAs.items()):
                if r.userId == owner and r.isDefault and r.sendAsEmail != row.sendAsEmail:
                    self.db.sendAs[k] = r.model_copy(update={"isDefault": False})
        row = row.model_copy(update=upd)
        self.db.sendAs[f"{owner}/{row.sendAsEmail}"] = row
        return self._send_as_json(row)

    @api("gmail.users.settings.sendAs.create", f"POST {S}/sendAs",
         "Add a send-as alias (outside the company it stays pending verification).", writes=True,
         params={"body": "{sendAsEmail, displayName, replyToAddress, signature, isDefault}"})
    def settings_sendAs_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        email = self._email(body.get("sendAsEmail"), "sendAsEmail")
        if email == owner or f"{owner}/{email}" in self.db.sendAs:
            raise conflict("Send-as address already exists", "alreadyExists")
        return self._put_send_as(owner, SendAs(userId=owner, sendAsEmail=email, verificationStatus=self._status(email)),
                                 body)

    @api("gmail.users.settings.sendAs.update", f"PUT {S}/sendAs/{{sendAsEmail}}",
         "Replace a send-as address's settings (display name, signature, reply-to, default).", writes=True,
         params={"sendAsEmail": "", "body": "SendAs"})
    def settings_sendAs_update(self, sendAsEmail: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        row = self._send_as(owner, sendAsEmail)
        blank = row.model_copy(update={"displayName": "", "replyToAddress": None, "signature": ""})
        return self._put_send_as(owner, blank, body)

    @api("gmail.users.settings.sendAs.patch", f"PATCH {S}/sendAs/{{sendAsEmail}}",
         "Change some of a send-as address's settings, e.g. {signature}.", writes=True,
         params={"sendAsEmail": "", "body": "SendAs fields to change"})
    def settings_sendAs_patch(self, sendAsEmail: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        return self._put_send_as(owner, self._send_as(owner, sendAsEmail), body)

    @api("gmail.users.settings.sendAs.delete", f"DELETE {S}/sendAs/{{sendAsEmail}}", "Remove a send-as alias.",
         writes=True, status=204, params={"sendAsEmail": ""})
    def settings_sendAs_delete(self, sendAsEmail: str, userId: str = "me") -> None:
        owner = self.owner(userId)
        row = self._send_as(owner, sendAsEmail)
        if row.sendAsEmail == owner:
            raise bad_request("Cannot delete the primary send-as address", "invalidArgument")
        del self.db.sendAs[f"{owner}/{row.sendAsEmail}"]

    @api("gmail.users.settings.sendAs.verify", f"POST {S}/sendAs/{{sendAsEmail}}/verify",
         "Re-send the verification mail for a pending send-as alias.", writes=True, status=204,
         params={"sendAsEmail": ""})
    def settings_sendAs_verify(self, sendAsEmail: str, userId: str = "me") -> None:
        row = self._send_as(self.owner(userId), sendAsEmail)
        if row.verificationStatus != "pending":
            raise bad_request("Send-as address does not need verification", "failedPrecondition")
