"""Drive v3 channels.stop: ends a push channel opened by changes.watch or files.watch."""

from __future__ import annotations

from ...base import api
from .state import DriveState

D = 'drive/v3'


class Channels(DriveState):
    @api("drive.channels.stop", f"POST {D}/channels/stop", "Stop a push channel. body: {id, resourceId}.",
         writes=True, status=204, params={"body": "{id, resourceId}"})
    def channels_stop(self, body: dict) -> None:
        self.stop_channel(body)
