"""Slackbot reminders: reminders.add / list / info / complete / delete. A mixin of `Slack`.

`time` takes what Slack's method page lists: a Unix timestamp, a number of seconds from now (up to 24 hours),
or a short phrase: "in 15 minutes", "in 2 hours", "tomorrow", "tomorrow at 9am", "at 3:30pm", "on Friday at
10am", and "every day|weekday|week|<weekday> [at ...]" (recurring). Phrases are read in the user's time zone
(`SlackUser.tz`) against the frozen clock; anything else is `cannot_parse`. Reminders never fire (the clock
does not move); verifiers read `db.reminders`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from ...base import SLACK_ALPHABET, api
from ...errors import slack_error
from .data_model import Reminder
from .state import SlackState

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_UNITS = {"minute": 60, "min": 60, "hour": 3600, "day": 86400, "week": 604800}
_IN = re.compile(r"^in (an?|\d+) (minute|min|hour|day|week)s?$")
_AT = re.compile(r"^(?:at )?(\d{1,2})(?::(\d\d))?\s*(am|pm)?$")
_WHEN = re.compile(r"^(?:(every) )?(today|tomorrow|day|weekday|week|(?:on )?(?:%s))?(?:\s*(?:at )?(.+))?$" % "|".join(_DAYS))


def _clock(text: str | None) -> tuple[int, int] | None:
    if not text:
        return 9, 0  # Slack's default hour for a day without a time
    m = _AT.match(text.strip())
    if not m:
        return None
    h, mi, ampm = int(m.group(1)), int(m.group(2) or 0), m.group(3)
    if ampm == "pm" and h < 12:
        h += 12
    elif ampm == "am" and h == 12:
        h = 0
    return (h, mi) if h < 24 and mi < 60 else None


def parse_time(value: str, now: datetime, tz: str) -> tuple[int, bool]:
    """(Unix time of the first reminder, recurring) or ValueError."""
    s = " ".join(str(value).strip().lower().split())
    if re.fullmatch(r"\d+(\.\d+)?", s):
        n = int(float(s))
        return (int(now.timestamp()) + n if n <= 86400 else n), False
    m = _IN.match(s)
    if m:
        n = 1 if m.group(1) in ("a", "an") else int(m.group(1))
        return int(now.timestamp()) + n * _UNITS[m.group(2)], False
    m = _WHEN.match(s)
    if not m or not (m.group(2) or m.group(3)):
        raise ValueError(value)
    every, day, at = m.group(1), (m.group(2) or "").removeprefix("on "), m.group(3)
    hm = _clock(at)
    if hm is None:
        raise ValueError(value)
    local = now.astimezone(ZoneInfo(tz))
    base = local.replace(hour=hm[0], minute=hm[1], second=0, microsecond=0)
    if day == "tomorrow":
        cand = base + timedelta(days=1)
    elif day in _DAYS:
        ahead = (_DAYS.index(day) - local.weekday()) % 7
        cand = base + timedelta(days=ahead)
        if cand <= local:
            cand += timedelta(days=7)
    else:  # today, every day / weekday / week, or a bare time: the next such moment
        cand = base if base > local else base + timedelta(days=1)
        if day == "weekday":
            while cand.weekday() >= 5:
                cand += timedelta(days=1)
    if (day in ("day", "weekday", "week") and not every) or (every and day in ("today", "tomorrow")):
        raise ValueError(value)
    return int(cand.timestamp()), bool(every)


class Reminders(SlackState):
    def reminder_json(self, r: Reminder) -> dict[str, Any]:
        out: dict[str, Any] = {"id": r.id, "creator": r.creator, "user": r.user, "text": r.text,
                               "recurring": r.recurring}
        if not r.recurring:
            out["time"] = r.time
            out["complete_ts"] = r.complete_ts
        else:
            out["recurrence"] = {"frequency": "custom", "next_time": r.time}
        return out

    def _reminder(self, reminder: str) -> Reminder:
        r = self.db.reminders.get(reminder)
        if r is None or self.me not in (r.creator, r.user):
            raise slack_error("not_found")
        return r

    @api("reminders.add", "POST api/reminders.add",
         "Create a reminder (time: Unix time, seconds from now, or e.g. 'in 2 hours', 'tomorrow at 9am').",
         writes=True, params={"text": "what to remind about", "time": "when", "user": "user id (default: you)"})
    def reminders_add(self, text: str, time: str, user: str | None = None, team_id: str | None = None,
                      recurrence: str | None = None) -> dict[str, Any]:
        uid = user or self.me
        target = self.db.users.get(uid)
        if target is None or target.deleted:
            raise slack_error("user_not_found")
        if target.is_bot:
            raise slack_error("cannot_add_bot")
        if not text.strip():
            raise slack_error("missing_argument")
        try:
            when, recurring = parse_time(time, self.ws.now, target.tz)
        except (ValueError, KeyError):
            raise slack_error("cannot_parse") from None
        if recurring and uid != self.me:
            raise slack_error("cannot_add_others_recurring")
        rid = "Rm" + self.new_id("reminder", SLACK_ALPHABET, 9)
        r = Reminder(id=rid, creator=self.me, user=uid, text=text, time=when, recurring=recurring)
        self.db.reminders[rid] = r
        return {"ok": True, "reminder": self.reminder_json(r)}

    @api("reminders.list", "POST api/reminders.list", "Reminders created by you or for you.")
    def reminders_list(self, team_id: str | None = None) -> dict[str, Any]:
        rows = sorted((r for r in self.db.reminders.values() if self.me in (r.creator, r.user)),
                      key=lambda r: (r.time, r.id))
        return {"ok": True, "reminders": [self.reminder_json(r) for r in rows]}

    @api("reminders.info", "POST api/reminders.info", "One reminder.", params={"reminder": "reminder id (Rm...)"})
    def reminders_info(self, reminder: str, team_id: str | None = None) -> dict[str, Any]:
        return {"ok": True, "reminder": self.reminder_json(self._reminder(reminder))}

    @api("reminders.complete", "POST api/reminders.complete", "Mark a reminder done.", writes=True,
         params={"reminder": "reminder id (Rm...)"})
    def reminders_complete(self, reminder: str, team_id: str | None = None) -> dict[str, Any]:
        r = self._reminder(reminder)
        if r.user != self.me:
            raise slack_error("cannot_complete_others")
        if r.recurring:
            raise slack_error("cannot_complete_recurring")
        if not r.complete_ts:
            self.db.reminders[r.id] = r.model_copy(update={"complete_ts": int(self.ws.now.timestamp())})
        return {"ok": True}

    @api("reminders.delete", "POST api/reminders.delete", "Delete a reminder.", writes=True,
         params={"reminder": "reminder id (Rm...)"})
    def reminders_delete(self, reminder: str, team_id: str | None = None) -> dict[str, Any]:
        r = self._reminder(reminder)
        del self.db.reminders[r.id]
        return {"ok": True}

    # -- seeding helper ---------------------------------------------------------------------------------
    def add_reminder(self, text: str, *, time: datetime, user: str | None = None, creator: str | None = None,
                     complete: bool = False) -> Reminder:
        """Plant a reminder (user and creator: Slack user ids, default the agent user)."""
        rid = "Rm" + self.new_id("reminder", SLACK_ALPHABET, 9)
        r = Reminder(id=rid, creator=creator or self.me, user=user or self.me, text=text, time=int(time.timestamp()),
                     complete_ts=int(self.ws.now.timestamp()) if complete else 0)
        self.db.reminders[rid] = r
        return r
