"""Calendar v3 channels.stop: ends a push channel opened by any *.watch."""

from __future__ import annotations

from ...base import api
from .state import CalendarState

C = "calendar/v3"


class ChannelsMixin(CalendarState):
    @api("calendar.channels.stop", f"POST {C}/channels/stop", "Stop a push channel. body: {id, resourceId}.",
         writes=True, status=204, params={"body": "{id, resourceId}"})
    def channels_stop(self, body: dict) -> None:
        self.stop_channel(body)
