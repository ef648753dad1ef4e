"""Calendar v3 settings: list, get and watch.

Settings are the agent user's own, seeded at bootstrap; the API reads them only.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import not_found
from ...paging import check_size, page
from ..push_channels import CHANNEL_PARAMS
from .calendars import etag
from .data_model import Setting
from .state import CalendarState

C = "calendar/v3"
DEFAULT_SETTINGS = {"autoAddHangouts": "true", "dateFieldOrder": "MDY", "defaultEventLength": "60",
                    "format24HourTime": "false", "hideInvitations": "false", "hideWeekends": "false",
                    "locale": "en", "remindOnRespondedEventsOnly": "false", "showDeclinedEvents": "true",
                    "timezone": "UTC", "useKeyboardShortcuts": "true", "weekStart": "0"}


def render_setting(s: Setting) -> dict[str, Any]:
    return {"kind": "calendar#setting", "etag": etag(s.canonical()), "id": s.id, "value": s.value}


class SettingsMixin(CalendarState):

    def bootstrap_settings(self) -> None:
        for k, v in DEFAULT_SETTINGS.items():
            self.db.settings[k] = Setting(id=k, value=v)

    def set_setting(self, key: str, value: str) -> Setting:
        """Seeding helper: the agent user's setting `key` (e.g. timezone, weekStart)."""
        row = Setting(id=key, value=str(value))
        self.db.settings[key] = row
        return row

    @api("calendar.settings.list", f"GET {C}/users/me/settings", "List your Calendar settings (timezone, locale...).")
    def settings_list(self, maxResults: int | None = None, pageToken: str | None = None,
                      syncToken: str | None = None) -> dict[str, Any]:
        rows = [render_setting(s) for _, s in sorted(self.db.settings.items())]
        chunk, nxt = page(rows, pageToken, check_size(maxResults, 100, 250, "maxResults"))
        out: dict[str, Any] = {"kind": "calendar#settings", "etag": etag(*(r["etag"] for r in rows)), "items": chunk}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    @api("calendar.settings.get", f"GET {C}/users/me/settings/{{setting}}", "Get one Calendar setting.",
         params={"setting": "e.g. timezone, weekStart, locale, defaultEventLength"})
    def settings_get(self, setting: str) -> dict[str, Any]:
        row = self.db.settings.get(setting)
        if row is None:
            raise not_found("Not Found")
        return render_setting(row)

    @api("calendar.settings.watch", f"POST {C}/users/me/settings/watch", "Watch your settings for changes.",
         writes=True, params=dict(CHANNEL_PARAMS))
    def settings_watch(self, body: dict) -> dict[str, Any]:
        return self.open_channel(body, "https://www.googleapis.com/calendar/v3/users/me/settings?alt=json")
