"""The Event fields a client may write that have no behaviour here beyond being kept: stored as given, validated
by type, and returned, as Calendar keeps them (guest permissions, reminders, extended properties, source, the
typed-event properties), plus attachments, which Calendar takes only with `supportsAttachments=true` (without it
the field is ignored, as Google ignores it) and fills from Drive when the URL names a Drive file.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import bad_request

BOOLEAN = ("anyoneCanAddSelf", "guestsCanInviteOthers", "guestsCanModify", "guestsCanSeeOtherGuests", "locked",
           "privateCopy", "endTimeUnspecified", "attendeesOmitted")
OBJECT = ("extendedProperties", "source", "focusTimeProperties", "outOfOfficeProperties", "workingLocationProperties",
          "birthdayProperties", "gadget", "reminders")
EVENT_TYPES = ("default", "outOfOffice", "focusTime", "workingLocation", "fromGmail", "birthday")
KEPT = (*BOOLEAN, *OBJECT, "eventType", "conferenceData")
MAX_ATTACHMENTS = 25
_DRIVE_ID = re.compile(r"(?:[?&]id=|/d/)([A-Za-z0-9_-]{10,})")


def kept(body: dict[str, Any], conference_version: int | None) -> dict[str, Any]:
    """The kept fields `body` sets (a None value clears one). conferenceData counts only with
    conferenceDataVersion=1: version 0 (the default) ignores it, as Calendar does."""
    out: dict[str, Any] = {}
    for k in KEPT:
        if k not in body:
            continue
        v = body[k]
        if k == "conferenceData" and (conference_version or 0) < 1:
            continue
        if v is None:
            out[k] = None
        elif k in BOOLEAN and not isinstance(v, bool):
            raise bad_request(f"Invalid value for {k}.", "invalid", k)
        elif k in (*OBJECT, "conferenceData") and not isinstance(v, dict):
            raise bad_request(f"Invalid value for {k}.", "invalid", k)
        elif k == "eventType" and v not in EVENT_TYPES:
            raise bad_request("Invalid value for eventType.", "invalid", "eventType")
        else:
            out[k] = v
    reminders = out.get("reminders")
    if reminders:
        for r in reminders.get("overrides") or []:
            if not isinstance(r, dict) or r.get("method") not in ("email", "popup") or \
                    not isinstance(r.get("minutes"), int) or not 0 <= r["minutes"] <= 40320:
                raise bad_request("Invalid reminder.", "invalid", "reminders.overrides")
    return out


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = {**old, **new}
    return {k: v for k, v in out.items() if v is not None}


def attachments(ws: Any, body: dict[str, Any], supports: bool | None) -> tuple[dict[str, Any], ...] | None:
    """The event's attachments from `body`, or None to leave them as they are (no `supportsAttachments=true`,
    or no `attachments` in the body)."""
    if not supports or "attachments" not in body:
        return None
    raw = body["attachments"] or []
    if not isinstance(raw, list) or not all(isinstance(a, dict) for a in raw):
        raise bad_request("Invalid value for attachments.", "invalid", "attachments")
    if len(raw) > MAX_ATTACHMENTS:
        raise bad_request(f"An event can have at most {MAX_ATTACHMENTS} attachments.", "invalid", "attachments")
    out = []
    for a in raw:
        url = a.get("fileUrl")
        if not isinstance(url, str) or not url.strip():
            raise bad_request("Missing attachment fileUrl.", "required", "attachments.fileUrl")
        item: dict[str, Any] = {"fileUrl": url}
        m = _DRIVE_ID.search(url)
        f = ws.drive.db.files.get(m.group(1)) if m else None
        if f is not None:  # a Drive file: Calendar fills in what Drive knows
            item.update({"fileId": f.id, "title": f.name, "mimeType": f.mimeType,
                         "iconLink": f"https://drive-thirdparty.googleusercontent.com/16/type/{f.mimeType}"})
        for k in ("title", "mimeType", "iconLink", "fileId"):
            if isinstance(a.get(k), str) and k not in item:
                item[k] = a[k]
        out.append(item)
    return tuple(out)
