"""Incremental sync of a calendar's events, as Calendar serves it: the last page of a full list carries a
`nextSyncToken`; a list with `syncToken` answers only the events changed since (deleted ones as status
"cancelled"). A token names the workspace's change counter (CalendarDB.rev) for one calendar, sealed with the
workspace seed: one this calendar did not issue, or from a state this workspace never reached, is refused 410
`fullSyncRequired`, as Google refuses an expired one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from ...errors import ApiError, bad_request

# the list parameters Calendar refuses beside a syncToken (its discovery document names them)
EXCLUSIVE = ("iCalUID", "orderBy", "privateExtendedProperty", "q", "sharedExtendedProperty", "timeMin", "timeMax",
             "updatedMin")


def _seal(seed: int, calendar_id: str, rev: int) -> bytes:
    return hashlib.blake2b(f"{seed}|{calendar_id}|{rev}".encode(), digest_size=10).digest()


def issue(seed: int, calendar_id: str, rev: int) -> str:
    return base64.b64encode(rev.to_bytes(8, "big") + _seal(seed, calendar_id, rev)).decode()


def since(token: str, seed: int, calendar_id: str, current: int) -> int:
    """The change counter a token names; 410 fullSyncRequired unless this calendar issued it in this history."""
    try:
        raw = base64.b64decode(token.encode(), validate=True)
    except (binascii.Error, ValueError):
        raise full_sync_required() from None
    if len(raw) != 18:
        raise full_sync_required()
    rev = int.from_bytes(raw[:8], "big")
    if rev > current or raw[8:] != _seal(seed, calendar_id, rev):
        raise full_sync_required()
    return rev


def check_alone(params: dict[str, object], show_deleted: bool | None) -> None:
    """400 for a parameter Calendar does not take beside a syncToken (showDeleted=false among them)."""
    for name in EXCLUSIVE:
        if params.get(name) not in (None, ""):
            raise bad_request(f"The parameter {name} cannot be used with syncToken.", "invalid", name)
    if show_deleted is False:
        raise bad_request("showDeleted cannot be false with syncToken: deleted events are always returned.",
                          "invalid", "showDeleted")


def full_sync_required() -> ApiError:
    message = "Sync token is no longer valid, a full sync is required."
    return ApiError(410, {"error": {"errors": [{"domain": "calendar", "reason": "fullSyncRequired", "message": message,
                                                "locationType": "parameter", "location": "syncToken"}],
                                    "code": 410, "message": message}})
