"""Plant an env0 package's calendar needles: NEEDLE_EVENTS (weekday + hour in the coming week, and env0's other time
fields) and the events of the env-owned seed packs its GCAL_FILL_CONFIG names. An event's "calendar" key is env0's
needle field (a secondary calendar of that name), not a service."""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Callable
from zoneinfo import ZoneInfo

from ..env0_planting import Planting

if TYPE_CHECKING:
    from ...environment import Workspace


def plant(ws: Workspace, mod: ModuleType, p: Planting) -> None:
    names = (getattr(mod, "GCAL_FILL_CONFIG", None) or {}).get("seed_packs") or []
    _calendar(ws, mod, p.rng, load_seed_packs(p.env0_root, list(names), p.needles_path, p.load, p.error))


LOCAL_TZ = ZoneInfo("America/Los_Angeles")  # env0's calendar user: relative hours are local, start_iso is UTC


def _event_times(e: dict, now: datetime, rng: random.Random) -> tuple[datetime, datetime, bool]:
    """(start, end, all_day) in UTC from env0's event template fields, by env0's rules."""
    if isinstance(e.get("start"), dict):  # an API-shaped event: {"dateTime": ...} or {"date": ...}, naive = local
        def at(t: dict) -> datetime:
            if t.get("date") and not t.get("dateTime"):
                return datetime.combine(date.fromisoformat(str(t["date"])[:10]), time.min, tzinfo=timezone.utc)  # its day part
            dt = datetime.fromisoformat(str(t["dateTime"]).replace("Z", "+00:00"))
            return (dt if dt.tzinfo else dt.replace(tzinfo=ZoneInfo(t.get("timeZone") or "America/Los_Angeles"))
                    ).astimezone(timezone.utc)
        start = at(e["start"])
        end = at(e["end"]) if isinstance(e.get("end"), dict) else start + timedelta(hours=1)
        return start, end, "date" in e["start"] and not e["start"].get("dateTime")
    if e.get("start_iso"):
        start = datetime.fromisoformat(str(e["start_iso"]).replace("Z", "+00:00"))
        end = (datetime.fromisoformat(str(e["end_iso"]).replace("Z", "+00:00")) if e.get("end_iso")
               else start + timedelta(hours=float(e.get("duration_hours", 1))))
        return start, end, False
    today = now.astimezone(LOCAL_TZ).date()
    if e.get("start_date"):
        day = date.fromisoformat(str(e["start_date"]))
    elif e.get("weekday") is not None:
        ahead = (int(e["weekday"]) - today.weekday()) % 7 or 7
        day = today + timedelta(days=ahead + 7 * int(e.get("week_offset", 0)))
    elif "days_from_now" in e:
        day = today + timedelta(days=int(e["days_from_now"]))
    else:
        lo, hi = e.get("days_from_now_range", (-30, 30))
        day = today + timedelta(days=rng.randint(int(lo), int(hi)))
    if e.get("all_day"):
        start = datetime.combine(day, time.min, tzinfo=timezone.utc)
        return start, start + timedelta(days=max(1, int(e.get("duration_days", 1)))), True
    hour = float(e["start_hour"]) if "start_hour" in e else float(rng.choice(e.get("start_hour_choices", [9, 10, 14])))
    hours = float(e["duration_hours"]) if "duration_hours" in e else float(rng.choice(e.get("duration_hours_choices", [1, 2])))
    start = datetime.combine(day, time(int(hour), int(round((hour % 1) * 60))), tzinfo=LOCAL_TZ).astimezone(timezone.utc)
    return start, start + timedelta(hours=max(0.25, hours)), False


def load_seed_packs(env0_root: Path | None, names: list[str], needles_path: Path, load: Callable[[Path], ModuleType],
                    error: Callable[[str, Path, str], Exception]) -> list[dict]:
    """Events of env0's env-owned gcal seed packs, read at run time from the user's env0 checkout (never copied)."""
    if not names:
        return []
    if env0_root is None:
        raise error("seed needles", needles_path, f"uses env0's gcal seed packs {names}; pass --env0-root "
                        "(an env0 checkout) or set ENV0_ROOT")
    path = Path(env0_root) / "packages" / "environments" / "mock-gcal" / "mock_gcal" / "seed" / "task_packs.py"
    mod = load(path)
    events: list[dict] = []
    for name in names:
        try:
            pack = mod.get_seed_pack(name)
        except Exception as e:  # noqa: BLE001 - env0 raises ValueError listing the packs it has
            raise error("seed needles", path, str(e)) from None
        events += [dict(x) for x in tuple(pack.needle_events) + tuple(pack.recurring_needles)]
    return events


def _calendar(ws: Workspace, mod: ModuleType, rng: random.Random, packs: list[dict]) -> None:
    conf = getattr(mod, "GCAL_FILL_CONFIG", None) or {}
    own = list(getattr(mod, "NEEDLE_EVENTS", None) or []) if conf.get("include_needles", True) else []
    cals: dict[str, str] = {"primary": ws.me.email}
    for e in packs + own:
        start, end, all_day = _event_times(e, ws.now, rng)
        key = str(e.get("calendar") or "primary")
        if key not in cals:
            cals[key] = ws.calendar.add_calendar(summary=key.replace("_", " ").title(), owner=ws.me.email).id
        attendees = [a["email"] if isinstance(a, dict) else a for a in e.get("attendees") or []]
        ev = ws.calendar.add_event(summary=e["summary"], start=start, end=end, attendees=attendees,
                                   description=e.get("description"), location=e.get("location"), all_day=all_day,
                                   organizer=cals[key] if key != "primary" else None)
        if e.get("recurrence"):
            rec = e["recurrence"] if isinstance(e["recurrence"], list) else [e["recurrence"]]
            ws.calendar.db.events[ev.id] = ev.model_copy(update={"recurrence": tuple(rec)})
