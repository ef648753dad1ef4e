"""events.quickAdd's reading of a line of text: the date and time words become the event's times, the rest its
title (dateutil's fuzzy parser, with the relative words and ranges it does not know)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo

# a time range; never the parts of a date ("2026-03-14", "3/14-3/15"): no digit, dash or slash on either side
_RANGE = re.compile(r"(?<![-/\d])\b(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)\s*(?:-|–|to)\s*(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)"
                    r"(?![-/]?\d)", re.I)
_NAMED = {"noon": "12pm", "midday": "12pm", "midnight": "12am"}  # times dateutil reads only as digits
_RELATIVE = re.compile(r"\b(today|tomorrow)\b", re.I)


def parse_quick(text: str, now: datetime, tz: tzinfo = timezone.utc) -> tuple[str, datetime, datetime, bool]:
    """(summary, start, end, all_day) from text: a date (today, tomorrow, a weekday, 'March 12', 2026-03-12)
    and an optional time or time range; the words that are neither make the summary. Words are read in the
    calendar's zone `tz`; a timed answer is in UTC, an all-day one is its local dates at midnight UTC."""
    from dateutil import parser as du

    base = now.astimezone(tz).replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
    rest, end_time = re.sub(r"\b(noon|midday|midnight)\b", lambda m: _NAMED[m.group(1).lower()], text, flags=re.I), None
    m = _RANGE.search(rest)
    if m:
        begin, end_time = m.group(1), m.group(2)
        meridiem = re.search(r"am|pm", end_time, re.I)
        if meridiem and not re.search(r"am|pm", begin, re.I):  # "2-3pm": the start shares the end's pm
            later = int(begin.split(":")[0]) % 12 > int(end_time.split(":")[0].strip("apmAPM ")) % 12
            begin = begin.strip() + ("am" if later and meridiem.group(0).lower() == "pm" else meridiem.group(0))
        rest = rest[:m.start()] + begin + rest[m.end():]
    rel = _RELATIVE.search(rest)
    if rel:
        base = base + timedelta(days=1 if rel.group(1).lower() == "tomorrow" else 0)
        rest = rest[:rel.start()] + rest[rel.end():]
    try:
        when, skipped = du.parse(rest, default=base, fuzzy_with_tokens=True)
        found = True
    except (ValueError, OverflowError):
        when, skipped, found = base, (rest,), False
    summary = re.sub(r"\s+", " ", " ".join(skipped)).strip(" ,.-")
    summary = re.sub(r"\b(on|at|from)$", "", summary).strip(" ,.-") or text.strip()
    has_time = found and bool(re.search(r"\d\s*(am|pm)\b|\d:\d\d", rest, re.I))
    if not has_time:
        day = when.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=timezone.utc)
        return summary, day, day + timedelta(days=1), True
    start = when.replace(tzinfo=tz)
    end = start + timedelta(hours=1)
    if end_time:
        try:
            t = du.parse(end_time, default=start.replace(tzinfo=None))
            if not re.search(r"am|pm", end_time, re.I) and re.search(r"pm", m.group(1), re.I) and t.hour < 12:  # type: ignore[union-attr]
                t = t.replace(hour=t.hour + 12)
            end = t.replace(tzinfo=tz)
            if end <= start:
                end += timedelta(hours=12) if end + timedelta(hours=12) > start else timedelta(days=1)
        except (ValueError, OverflowError):
            pass
    return summary, start.astimezone(timezone.utc), end.astimezone(timezone.utc), False
