"""What every part of Gmail's users.settings shares: the settings path, field checking as Gmail answers a bad
body, the addresses rule (an address in the company's domain is verified at once; others stay "pending", since no
verification mail can be answered), and the current value of the single-value settings."""

from __future__ import annotations

from typing import Any

from ....errors import bad_request
from ..mailbox import Mailbox

S = "gmail/v1/users/{userId}/settings"

_DISPOSITIONS = ("dispositionUnspecified", "leaveInInbox", "archive", "trash", "markRead")
# name -> (defaults, {field: bool | str | "ms" | "int" | (enum values)})
SETTINGS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "vacation": ({"enableAutoReply": False}, {
        "enableAutoReply": bool, "responseSubject": str, "responseBodyPlainText": str, "responseBodyHtml": str,
        "restrictToContacts": bool, "restrictToDomain": bool, "startTime": "ms", "endTime": "ms"}),
    "autoForwarding": ({"enabled": False}, {"enabled": bool, "emailAddress": str, "disposition": _DISPOSITIONS}),
    "imap": ({"enabled": True, "autoExpunge": True, "expungeBehavior": "archive", "maxFolderSize": 0}, {
        "enabled": bool, "autoExpunge": bool, "maxFolderSize": "int",
        "expungeBehavior": ("expungeBehaviorUnspecified", "archive", "trash", "deleteForever")}),
    "pop": ({"accessWindow": "disabled", "disposition": "leaveInInbox"}, {
        "accessWindow": ("accessWindowUnspecified", "disabled", "fromNowOn", "allMail"), "disposition": _DISPOSITIONS}),
    "language": ({"displayLanguage": "en"}, {"displayLanguage": str}),
}


def check_fields(where: str, body: Any, spec: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request(f"Invalid JSON payload received. {where} must be an object", "invalidArgument")
    out: dict[str, Any] = {}
    for k, v in body.items():
        kind = spec.get(k)
        if kind is None:
            raise bad_request(f'Invalid JSON payload received. Unknown name "{k}" at \'{where}\'', "invalidArgument")
        if v is None:
            continue
        ok = (isinstance(v, kind) if kind in (bool, str) else v in kind if isinstance(kind, tuple)
              else (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and v.isdigit()))
        if not ok:
            raise bad_request(f"Invalid value at '{where}.{k}' ({v!r})", "invalidArgument")
        out[k] = str(v) if kind == "ms" else int(v) if kind == "int" else v
    return out


class SettingsBase(Mailbox):
    def _email(self, value: Any, field: str) -> str:
        if not isinstance(value, str) or "@" not in value or " " in value.strip():
            raise bad_request(f"Invalid {field}", "invalidArgument")
        return value.strip().lower()

    def _status(self, email: str) -> str:
        return "accepted" if email.endswith("@" + self.ws.domain) else "pending"

    def setting(self, owner: str, name: str) -> dict[str, Any]:
        """The current value of vacation / autoForwarding / imap / pop / language (verifier helper)."""
        row = self.db.mailSettings.get(f"{owner}/{name}")
        return dict(row.value) if row is not None else dict(SETTINGS[name][0])
