"""Calendar time as Google keeps it: an event time is an instant (RFC 3339 with an offset, or a local date-time
read in its IANA `timeZone`) or an all-day date; answers give instants in the requested or the calendar's zone.

Stored form of a timed start/end: `{"dateTime": "<UTC, Z>", "timeZone": "<IANA name, if one was given>"}`; the
local wall time is the UTC instant read in that zone (zoneinfo keeps the rules, DST included).
"""

from __future__ import annotations

import functools
from datetime import date, datetime, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from ...errors import bad_request

UTC = timezone.utc


@functools.lru_cache(maxsize=512)
def _zone(name: str) -> tzinfo | None:
    if name in ("UTC", "Etc/UTC", "GMT"):
        return UTC
    try:
        return ZoneInfo(name)
    except Exception:  # ZoneInfo raises several types for malformed keys  # noqa: BLE001
        return None


def zone(name: Any, message: str = "Invalid time zone definition.", param: str = "timeZone") -> tzinfo:
    """The zone an IANA name names; 400 (as Calendar answers an unknown name) otherwise."""
    tz = _zone(name) if isinstance(name, str) and name else None
    if tz is None:
        raise bad_request(message, "invalid", param)
    return tz


def parse_rfc3339(value: str, param: str) -> datetime:
    try:
        v = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        dt = datetime.fromisoformat(v)
    except (ValueError, AttributeError):
        raise bad_request("Bad Request", "badRequest", param) from None
    if dt.tzinfo is None:
        raise bad_request("Bad Request", "badRequest", param)
    return dt.astimezone(UTC)


def _time_zone(t: dict[str, Any], param: str) -> tzinfo | None:
    name = t.get("timeZone")
    if not name:
        return None
    return zone(name, f"Invalid time zone definition for {param} time.", f"{param}.timeZone")


def event_time(t: dict[str, Any] | None, param: str) -> datetime:
    """The UTC instant an event time names: a date-time with an offset as it says, one without in its `timeZone`
    (400 when it has neither, as Calendar answers), an all-day date at its midnight UTC."""
    if not isinstance(t, dict):
        raise bad_request(f"Missing {param} time.", "required")
    if t.get("dateTime"):
        try:
            dt = datetime.fromisoformat(str(t["dateTime"]).replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise bad_request(f"Invalid {param} time.", "invalid") from None
        tz = _time_zone(t, param)
        if dt.tzinfo is None:
            if tz is None:
                raise bad_request(f"Missing time zone definition for {param} time.", "required")
            dt = dt.replace(tzinfo=tz)
        return dt.astimezone(UTC)
    if t.get("date"):
        return datetime.combine(_date(t["date"], param), datetime.min.time(), UTC)
    raise bad_request(f"Missing {param} time.", "required")


def _date(value: Any, param: str) -> date:
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise bad_request(f"Invalid {param} time.", "invalid") from None


def stored(t: dict[str, Any] | None, param: str) -> dict[str, Any]:
    """The stored form of a start/end a client wrote (validated: 400 on a bad time or zone)."""
    if isinstance(t, dict) and t.get("date") and not t.get("dateTime"):
        return {"date": _date(t["date"], param).isoformat()}
    instant = event_time(t, param)
    out: dict[str, Any] = {"dateTime": fmt(instant)}
    if t and t.get("timeZone"):  # type: ignore[union-attr]
        out["timeZone"] = t["timeZone"]  # type: ignore[index]
    return out


def merged(old: dict[str, Any], new: Any) -> Any:
    """A patch's start/end over the stored one: fields it leaves out are kept, `timeZone` included (a patch merges
    nested objects), but switching between a date and a date-time drops the other."""
    if not isinstance(new, dict):
        return new
    out = {**old, **new}
    if new.get("date") and not new.get("dateTime"):
        out.pop("dateTime", None)
        out.pop("timeZone", None)
    elif new.get("dateTime"):
        out.pop("date", None)
    return {k: v for k, v in out.items() if v is not None}


def fmt(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def local(dt: datetime, tz: tzinfo) -> str:
    """RFC 3339 in `tz` with its offset (`Z` at UTC), as Calendar writes times in its answers."""
    out = dt.astimezone(tz).replace(microsecond=0).isoformat()
    return out[:-6] + "Z" if out.endswith("+00:00") else out


def rendered(t: dict[str, Any], tz: tzinfo) -> dict[str, Any]:
    """A stored start/end as Calendar answers it: the instant in `tz`, the event's own zone kept."""
    if "dateTime" not in t:
        return {k: t[k] for k in ("date",) if k in t}
    out = {"dateTime": local(event_time(t, "start"), tz)}
    if t.get("timeZone"):
        out["timeZone"] = t["timeZone"]
    return out
