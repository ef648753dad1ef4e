"""Recurring events as Calendar expands them: RRULE / EXRULE / RDATE / EXDATE (dateutil.rrule) read in the
series' time zone (its start's `timeZone`, else its calendar's), so 10:00 stays 10:00 local across a DST change.

An occurrence is named by its original start, as Google names instances: `<seriesId>_<YYYYMMDDTHHMMSSZ>` (UTC)
for a timed series, `<seriesId>_<YYYYMMDD>` for an all-day one. A changed occurrence (moved, edited, cancelled) is
an Event row kept in the series' `exceptions` under that stamp; the others are made from the series when asked.
"""

from __future__ import annotations

import re
from datetime import MAXYEAR, datetime, time, timedelta, tzinfo
from typing import Iterator

from dateutil.rrule import rrule, rrulebase, rruleset, rrulestr

from ...errors import ApiError, bad_request
from .data_model import Event
from .times import UTC, event_time, fmt, zone

MAX_INSTANCES = 2500  # Calendar's page cap; also what one expansion yields at most
HORIZON = timedelta(days=730)  # without timeMax, an endless series is expanded this far past now
_LINE = re.compile(r"^(RRULE|EXRULE|RDATE|EXDATE)([;:].*)$", re.I)
_UNTIL = re.compile(r"(UNTIL=)([0-9TZtz]+)")
_STAMP = re.compile(r"^(\d{8})(T\d{6}Z)?$")
_RULES: dict[tuple[int, str], tuple[Event, rrulebase]] = {}
_RULES_MAX = 2048
_CYCLE = 400  # years


def invalid() -> Exception:
    return bad_request("Invalid recurrence rule.", "invalid", "recurrence")


def all_day(ev: Event) -> bool:
    return "dateTime" not in ev.start


def series_zone(ev: Event, calendar_zone: str) -> tzinfo:
    """The zone a series is expanded in: its start's timeZone, else its calendar's (UTC for all-day series)."""
    if all_day(ev):
        return UTC
    return zone(ev.start.get("timeZone") or calendar_zone or "UTC")


def stamp(ev: Event, original: datetime) -> str:
    return original.strftime("%Y%m%d") if all_day(ev) else original.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def split_id(event_id: str) -> tuple[str, str] | None:
    """(series id, stamp) of an instance id, or None when the id names no instance."""
    series, _, key = event_id.rpartition("_")
    return (series, key) if series and _STAMP.match(key) else None


def _original_of(ev: Event, key: str) -> datetime | None:
    m = _STAMP.match(key)
    if not m or bool(m.group(2)) == all_day(ev):
        return None
    return datetime.strptime(key, "%Y%m%dT%H%M%SZ" if m.group(2) else "%Y%m%d").replace(tzinfo=UTC)


def _value(raw: str, params: dict[str, str], tz: tzinfo, at: time, day_only: bool) -> datetime:
    """One RDATE / EXDATE value as an aware datetime: UTC (`Z`), in its TZID, else in the series' zone; a bare date
    at the series' local start time."""
    raw = raw.split("/")[0].strip()  # a PERIOD value: its start
    try:
        if len(raw) == 8 or params.get("VALUE", "").upper() == "DATE":
            d = datetime.strptime(raw[:8], "%Y%m%d").date()
            return datetime.combine(d, time(0) if day_only else at, tz if not day_only else UTC)
        if raw.upper().endswith("Z"):
            return datetime.strptime(raw[:-1], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
        local = zone(params["TZID"]) if params.get("TZID") else tz
        return datetime.strptime(raw, "%Y%m%dT%H%M%S").replace(tzinfo=local)
    except (ValueError, KeyError):
        raise invalid() from None


def _until(rule: str, tz: tzinfo, day_only: bool) -> str:
    """UNTIL in UTC, as dateutil wants it beside an aware start: a bare date ends at the end of that local day, a
    local date-time is read in the series' zone."""
    def fix(m: re.Match) -> str:
        v = m.group(2).upper()
        try:
            if v.endswith("Z"):
                return m.group(0)
            if len(v) == 8:
                end = datetime.combine(datetime.strptime(v, "%Y%m%d").date(), time(23, 59, 59), UTC if day_only else tz)
            else:
                end = datetime.strptime(v, "%Y%m%dT%H%M%S").replace(tzinfo=tz)
        except ValueError:
            raise invalid() from None
        return m.group(1) + end.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return _UNTIL.sub(fix, rule)


def _late(rule: rrule) -> rrule:
    """The same rule started whole 400-year cycles later, near year 9999, without COUNT or UNTIL. The Gregorian
    calendar repeats every 400 years (146,097 days, 20,871 weeks), so the occurrences are the same, shifted; and
    dateutil, which searches an empty rule period by period up to year 9999 (seconds, day by day), stops within one
    cycle."""
    start = rule._dtstart.replace(tzinfo=None)
    shift = (MAXYEAR - _CYCLE - start.year) // _CYCLE * _CYCLE
    return rule.replace(dtstart=start.replace(year=start.year + shift), until=None, count=None)


def _check_productive(rules: list[rrule], exrules: list[rrule]) -> None:
    """400 invalid for a rule set with no occurrence in a 400-year cycle: every later expansion would make dateutil
    search it to year 9999. What dateutil refuses only when it iterates (an interval no BYHOUR meets) is refused too."""
    probe = rruleset()
    for r in rules:
        probe.rrule(_late(r))
    for r in exrules:
        probe.exrule(_late(r))
    try:
        if any(next(iter(_late(r)), None) is None for r in exrules) or (rules and next(iter(probe), None) is None):
            raise invalid()
    except (ValueError, OverflowError):
        raise invalid() from None


def rule_set(ev: Event, tz: tzinfo) -> rrulebase:
    """The series' occurrence starts (aware, in `tz`); 400 invalid on a rule dateutil cannot read."""
    key = (id(ev), str(tz))
    hit = _RULES.get(key)
    if hit is not None and hit[0] is ev:
        return hit[1]
    day_only = all_day(ev)
    first = event_time(ev.start, "start")
    start = first if day_only else first.astimezone(tz)
    rules = rruleset()
    found: list[rrule] = []
    excluded: list[rrule] = []
    for line in ev.recurrence or ():
        m = _LINE.match(line.strip()) if isinstance(line, str) else None
        if not m:
            raise invalid()
        kind, rest = m.group(1).upper(), m.group(2)
        params_text, _, values = rest.lstrip(";").partition(":") if rest.startswith(";") else ("", "", rest[1:])
        if kind in ("RRULE", "EXRULE"):
            try:
                rule = rrulestr(_until(f"RRULE:{values}", tz, day_only), dtstart=start)
            except (ValueError, TypeError, KeyError):
                raise invalid() from None
            if not isinstance(rule, rrule):
                raise invalid()
            (found if kind == "RRULE" else excluded).append(rule)
            continue
        params = dict(p.split("=", 1) for p in params_text.split(";") if "=" in p)
        params = {k.upper(): v for k, v in params.items()}
        for raw in values.split(","):
            when = _value(raw, params, tz, start.timetz().replace(tzinfo=None), day_only)
            (rules.rdate if kind == "RDATE" else rules.exdate)(when)
    _check_productive(found, excluded)
    for r in found:
        rules.rrule(r)
    for r in excluded:
        rules.exrule(r)
    if not found:
        rules.rdate(start)  # RDATEs alone: the series' own start is its first occurrence
    if len(_RULES) >= _RULES_MAX:
        _RULES.clear()
    _RULES[key] = (ev, rules)
    return rules


def _readable(ev: Event, tz: tzinfo) -> rrulebase:
    """The series' rule set for a read: a row planted without the API's check (a seeder's) whose rule does not read
    is its first occurrence alone, so one bad row does not fail every listing."""
    try:
        return rule_set(ev, tz)
    except ApiError:
        only = rruleset()
        first = event_time(ev.start, "start")
        only.rdate(first if all_day(ev) else first.astimezone(tz))
        return only


def originals(ev: Event, tz: tzinfo, lo: datetime | None, hi: datetime | None, now: datetime) -> Iterator[datetime]:
    """Original starts (UTC) of the occurrences whose original span meets [lo, hi), in order, at most MAX_INSTANCES;
    without `hi`, up to HORIZON past now (or past the series' start, if later)."""
    first = event_time(ev.start, "start")
    length = event_time(ev.end, "end") - first
    horizon = hi if hi is not None else max(now, first, lo or first) + HORIZON
    begin = max(lo - length, first) if lo is not None else first
    n = 0
    for start in _readable(ev, tz).xafter(begin if all_day(ev) else begin.astimezone(tz), inc=True):
        start = start.astimezone(UTC)
        if start >= horizon or n >= MAX_INSTANCES:
            return
        if lo is None or start + length > lo:
            n += 1
            yield start


def is_occurrence(ev: Event, tz: tzinfo, key: str) -> datetime | None:
    """The original start a stamp names, if the series has an occurrence there."""
    original = _original_of(ev, key)
    if original is None:
        return None
    if ev.exceptions and key in ev.exceptions:
        return original
    probe = original if all_day(ev) else original.astimezone(tz)
    got = next(iter(_readable(ev, tz).xafter(probe, count=1, inc=True)), None)
    return original if got is not None and got.astimezone(UTC) == original else None


def instance(ev: Event, original: datetime) -> Event:
    """The occurrence at `original` as an event of its own: the series' exception there, else made from the series."""
    key = stamp(ev, original)
    if ev.exceptions and key in ev.exceptions:
        return ev.exceptions[key]
    first = event_time(ev.start, "start")
    end = original + (event_time(ev.end, "end") - first)
    if all_day(ev):
        start_t, end_t = {"date": original.date().isoformat()}, {"date": end.date().isoformat()}
    else:
        start_t, end_t = {"dateTime": fmt(original)}, {"dateTime": fmt(end)}
        if ev.start.get("timeZone"):
            start_t["timeZone"] = ev.start["timeZone"]
        if ev.end.get("timeZone"):
            end_t["timeZone"] = ev.end["timeZone"]
    return ev.model_copy(update={"id": f"{ev.id}_{key}", "start": start_t, "end": end_t, "recurrence": None,
                                 "exceptions": None, "recurringEventId": ev.id, "originalStart": dict(start_t)})


def instances(ev: Event, tz: tzinfo, lo: datetime | None, hi: datetime | None, now: datetime) -> list[Event]:
    """The series' occurrences that meet [lo, hi) where they are now (a moved one where it was moved to),
    cancelled ones included, by start."""
    out: dict[str, Event] = {}
    for original in originals(ev, tz, lo, hi, now):
        out[stamp(ev, original)] = instance(ev, original)
    for key, ex in (ev.exceptions or {}).items():  # moved into (or out of) the window
        s, e = event_time(ex.start, "start"), event_time(ex.end, "end")
        if (lo is None or e > lo) and (hi is None or s < hi):
            out[key] = ex
        else:
            out.pop(key, None)
    return sorted(out.values(), key=lambda x: (event_time(x.start, "start"), x.id))
