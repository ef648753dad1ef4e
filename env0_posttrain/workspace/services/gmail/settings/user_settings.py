"""Gmail v1 users.settings' own methods: get and update vacation, autoForwarding, imap, pop and language.

A mailbox stores a row only once a setting was changed; until then Gmail's defaults are served (fields.py).
autoForwarding is recorded but forwards nothing, and it needs an accepted forwarding address.
"""

from __future__ import annotations

from typing import Any

from ....base import api
from ....errors import bad_request
from ..data_model import MailSetting
from ..mime import address_of
from .fields import S, SETTINGS, SettingsBase, check_fields


class UserSettings(SettingsBase):
    def _put_setting(self, userId: str, name: str, body: dict) -> dict[str, Any]:
        owner = self.owner(userId)
        defaults, spec = SETTINGS[name]
        value = {**defaults, **check_fields(name, body, spec)}
        if name == "vacation" and value.get("startTime") and value.get("endTime") \
                and int(value["endTime"]) <= int(value["startTime"]):
            raise bad_request("Vacation end time must be after its start time", "invalidArgument")
        if name == "autoForwarding" and value.get("enabled"):
            email = address_of(value.get("emailAddress") or "").lower()
            fwd = self.db.forwardingAddresses.get(f"{owner}/{email}")
            if fwd is None or fwd.verificationStatus != "accepted":
                raise bad_request("Unrecognized forwarding address", "failedPrecondition")
            value["emailAddress"] = email
            if value.get("disposition", "dispositionUnspecified") == "dispositionUnspecified":
                raise bad_request("Missing disposition", "invalidArgument")
        self.db.mailSettings[f"{owner}/{name}"] = MailSetting(userId=owner, name=name, value=value)
        return value

    @api("gmail.users.settings.getVacation", f"GET {S}/vacation", "Get the vacation auto-reply.")
    def settings_getVacation(self, userId: str = "me") -> dict[str, Any]:
        return self.setting(self.owner(userId), "vacation")

    @api("gmail.users.settings.updateVacation", f"PUT {S}/vacation",
         "Set the vacation auto-reply: body {enableAutoReply, responseSubject, responseBodyPlainText, "
         "restrictToDomain, startTime, endTime (epoch ms)}.", writes=True, params={"body": "VacationSettings"})
    def settings_updateVacation(self, body: dict, userId: str = "me") -> dict[str, Any]:
        return self._put_setting(userId, "vacation", body)

    @api("gmail.users.settings.getAutoForwarding", f"GET {S}/autoForwarding", "Get the auto-forwarding setting.")
    def settings_getAutoForwarding(self, userId: str = "me") -> dict[str, Any]:
        return self.setting(self.owner(userId), "autoForwarding")

    @api("gmail.users.settings.updateAutoForwarding", f"PUT {S}/autoForwarding",
         "Turn auto-forwarding on/off: body {enabled, emailAddress (a verified forwarding address), "
         "disposition: leaveInInbox|archive|trash|markRead}.", writes=True, params={"body": "AutoForwarding"})
    def settings_updateAutoForwarding(self, body: dict, userId: str = "me") -> dict[str, Any]:
        return self._put_setting(userId, "autoForwarding", body)

    @api("gmail.users.settings.getImap", f"GET {S}/imap", "Get the IMAP settings.")
    def settings_getImap(self, userId: str = "me") -> dict[str, Any]:
        return self.setting(self.owner(userId), "imap")

    @api("gmail.users.settings.updateImap", f"PUT {S}/imap", "Change the IMAP settings.", writes=True,
         params={"body": "{enabled, autoExpunge, expungeBehavior, maxFolderSize}"})
    def settings_updateImap(self, body: dict, userId: str = "me") -> dict[str, Any]:
        return self._put_setting(userId, "imap", body)

    @api("gmail.users.settings.getPop", f"GET {S}/pop", "Get the POP settings.")
    def settings_getPop(self, userId: str = "me") -> dict[str, Any]:
        return self.setting(self.owner(userId), "pop")

    @api("gmail.users.settings.updatePop", f"PUT {S}/pop", "Change the POP settings.", writes=True,
         params={"body": "{accessWindow: disabled|fromNowOn|allMail, disposition}"})
    def settings_updatePop(self, body: dict, userId: str = "me") -> dict[str, Any]:
        return self._put_setting(userId, "pop", body)

    @api("gmail.users.settings.getLanguage", f"GET {S}/language", "Get the display language.")
    def settings_getLanguage(self, userId: str = "me") -> dict[str, Any]:
        return self.setting(self.owner(userId), "language")

    @api("gmail.users.settings.updateLanguage", f"PUT {S}/language", "Change the display language.", writes=True,
         params={"body": "{displayLanguage: e.g. en, fr, de}"})
    def settings_updateLanguage(self, body: dict, userId: str = "me") -> dict[str, Any]:
        lang = body.get("displayLanguage")
        if not isinstance(lang, str) or not lang.strip():
            raise bad_request("Invalid display language", "invalidArgument")
        return self._put_setting(userId, "language", body)

    def set_mail_setting(self, name: str, value: dict[str, Any], owner: str | None = None) -> None:
        """Seeding helper: a mailbox's vacation / autoForwarding / imap / pop / language, merged on the defaults."""
        owner = owner or self.ws.me.email
        defaults, spec = SETTINGS[name]
        self.db.mailSettings[f"{owner}/{name}"] = MailSetting(userId=owner, name=name,
                                                              value={**defaults, **check_fields(name, value, spec)})
