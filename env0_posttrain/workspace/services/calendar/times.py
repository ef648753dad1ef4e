"""RFC 3339 parsing and event-time helpers for Calendar."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ...errors import bad_request


def parse_rfc3339(value: str, param: str) -> datetime:
    try:
        v = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        dt = datetime.fromisoformat(v)
    except (ValueError, AttributeError):
        raise bad_request("Bad Request", "badRequest", param) from None
    if dt.tzinfo is None:
        raise bad_request("Bad Request", "badRequest", param)
    return dt.astimezone(timezone.utc)


def event_time(t: dict[str, Any] | None, param: str) -> datetime:
    if not isinstance(t, dict):
        raise bad_request(f"Missing {param} time.", "required")
    if t.get("dateTime"):
        v = str(t["dateTime"])
        try:
            dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            raise bad_request(f"Invalid {param} time.", "invalid") from None
        if dt.tzinfo is None:
            if not t.get("timeZone"):
                raise bad_request(f"Missing time zone definition for {param} time.", "required")
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.astimezone(timezone.utc)
    if t.get("date"):
        try:
            return datetime.fromisoformat(str(t["date"])).replace(tzinfo=timezone.utc)
        except ValueError:
            raise bad_request(f"Invalid {param} time.", "invalid") from None
    raise bad_request(f"Missing {param} time.", "required")


def fmt(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def normalize_time(t: dict[str, Any]) -> dict[str, Any]:
    out = {k: t[k] for k in ("date", "dateTime", "timeZone") if t.get(k)}
    return out
