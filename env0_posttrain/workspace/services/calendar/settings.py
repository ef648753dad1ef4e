"""Calendar v3 settings.list/get, colors.get, and push-notification channels (*.watch, channels.stop).

Settings are the agent user's own, seeded at bootstrap; the API reads them only. A watch registers
a channel row (nothing is ever pushed: the workspace has no network) that channels.stop removes.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, not_found
from ...paging import check_size, page
from .calendars import etag
from .colors import colors_resource
from .data_model import Channel, Setting

C = "calendar/v3"
DEFAULT_SETTINGS = {"autoAddHangouts": "true", "dateFieldOrder": "MDY", "defaultEventLength": "60",
                    "format24HourTime": "false", "hideInvitations": "false", "hideWeekends": "false",
                    "locale": "en", "remindOnRespondedEventsOnly": "false", "showDeclinedEvents": "true",
                    "timezone": "UTC", "useKeyboardShortcuts": "true", "weekStart": "0"}
_CHANNEL = {"body": "Channel: id, type ('web_hook'), address"}


def render_setting(s: Setting) -> dict[str, Any]:
    return {"kind": "calendar#setting", "etag": etag(s.canonical()), "id": s.id, "value": s.value}


class SettingsMixin:
    ws: Any
    db: Any

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

    @api("calendar.colors.get", f"GET {C}/colors", "The colour palette for calendars and events (colorId values).")
    def colors_get(self) -> dict[str, Any]:
        return colors_resource("2012-02-14T00:00:00.000Z")

    # -- push channels --------------------------------------------------------------------------
    def _watch(self, body: dict, resource_uri: str) -> dict[str, Any]:
        cid = body.get("id")
        if not isinstance(cid, str) or not cid:
            raise bad_request("Required parameter: id", "required", "id")
        if body.get("type") not in ("web_hook", "webhook"):
            raise bad_request("Invalid value for type.", "invalid", "type")
        if not isinstance(body.get("address"), str) or not body["address"].startswith("https://"):
            raise bad_request("WebHook callback must be HTTPS.", "push.webhookUrlNotHttps", "address")
        if cid in self.db.channels:
            raise bad_request(f"Channel id {cid} not unique", "channelIdNotUnique", "id")
        exp = self.ws.now_ms() + 7 * 24 * 3600 * 1000
        rid = self.new_id("channel", "0123456789abcdefghijklmnopqrstuvwxyz", 27)  # type: ignore[attr-defined]
        ch = Channel(id=cid, resourceId=rid, resourceUri=resource_uri, expiration=str(exp),
                     token=body.get("token") if isinstance(body.get("token"), str) else None)
        self.db.channels[cid] = ch
        out = {"kind": "api#channel", "id": ch.id, "resourceId": ch.resourceId, "resourceUri": ch.resourceUri,
               "expiration": ch.expiration}
        if ch.token:
            out["token"] = ch.token
        return out

    @api("calendar.events.watch", f"POST {C}/calendars/{{calendarId}}/events/watch",
         "Watch a calendar's events for changes (registers a push channel).", writes=True,
         params={"calendarId": "", **_CHANNEL})
    def events_watch(self, body: dict, calendarId: str = "primary") -> dict[str, Any]:
        cal = self._cal(calendarId)  # type: ignore[attr-defined]
        return self._watch(body, f"https://www.googleapis.com/calendar/v3/calendars/{cal.id}/events?alt=json")

    @api("calendar.acl.watch", f"POST {C}/calendars/{{calendarId}}/acl/watch",
         "Watch a calendar's access rules for changes.", writes=True, params={"calendarId": "", **_CHANNEL})
    def acl_watch(self, calendarId: str, body: dict) -> dict[str, Any]:
        cal = self._acl_cal(calendarId)  # type: ignore[attr-defined]
        return self._watch(body, f"https://www.googleapis.com/calendar/v3/calendars/{cal.id}/acl?alt=json")

    @api("calendar.calendarList.watch", f"POST {C}/users/me/calendarList/watch",
         "Watch your calendar list for changes.", writes=True, params=dict(_CHANNEL))
    def calendarList_watch(self, body: dict) -> dict[str, Any]:
        return self._watch(body, "https://www.googleapis.com/calendar/v3/users/me/calendarList?alt=json")

    @api("calendar.settings.watch", f"POST {C}/users/me/settings/watch", "Watch your settings for changes.",
         writes=True, params=dict(_CHANNEL))
    def settings_watch(self, body: dict) -> dict[str, Any]:
        return self._watch(body, "https://www.googleapis.com/calendar/v3/users/me/settings?alt=json")

    @api("calendar.channels.stop", f"POST {C}/channels/stop", "Stop a push channel. body: {id, resourceId}.",
         writes=True, status=204, params={"body": "{id, resourceId}"})
    def channels_stop(self, body: dict) -> None:
        ch = self.db.channels.get(body.get("id")) if isinstance(body.get("id"), str) else None
        if ch is None or body.get("resourceId") != ch.resourceId:
            raise not_found(f"Channel '{body.get('id')}' not found for project")
        del self.db.channels[ch.id]
