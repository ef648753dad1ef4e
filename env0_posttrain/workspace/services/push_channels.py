"""Google push notifications, one shape for every Google API here (Calendar's *.watch and Drive's changes.watch and
files.watch): a watch registers a channel row that channels.stop removes; nothing is ever pushed (the workspace
reaches no network)."""

from __future__ import annotations

from typing import Any

from ..base import Row, Service
from ..errors import bad_request, not_found

CHANNEL_PARAMS = {"body": "Channel: id, type ('web_hook'), address"}  # what every *.watch shows the agent
_RESOURCE_ID = "0123456789abcdefghijklmnopqrstuvwxyz"


class Channel(Row):
    id: str
    resourceId: str
    resourceUri: str
    expiration: str | None = None
    token: str | None = None


class PushChannels(Service):
    """The channel mechanics of a Google service whose DB has a `channels` table."""

    db: Any

    def open_channel(self, body: dict, resource_uri: str) -> dict[str, Any]:
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
        rid = self.new_id("channel", _RESOURCE_ID, 27)
        ch = Channel(id=cid, resourceId=rid, resourceUri=resource_uri, expiration=str(exp),
                     token=body.get("token") if isinstance(body.get("token"), str) else None)
        self.db.channels[cid] = ch
        out = {"kind": "api#channel", "id": ch.id, "resourceId": ch.resourceId, "resourceUri": ch.resourceUri,
               "expiration": ch.expiration}
        if ch.token:
            out["token"] = ch.token
        return out

    def stop_channel(self, body: dict) -> None:
        ch = self.db.channels.get(body.get("id")) if isinstance(body.get("id"), str) else None
        if ch is None or body.get("resourceId") != ch.resourceId:
            raise not_found(f"Channel '{body.get('id')}' not found for project")
        del self.db.channels[ch.id]
