"""Stripe events: what happened to the account's objects, newest first."""

from __future__ import annotations

import json
from typing import Any

from ...base import api
from ...tool_args import IntRange
from .data_model import Event
from .errors import invalid, no_such
from .state import CHARGE_PAGE, StripeState


def _event_json(e: Event) -> dict[str, Any]:
    return {"id": e.id, "object": "event", "api_version": e.api_version, "created": e.created,
            "data": json.loads(e.data_json), "livemode": False, "pending_webhooks": 0,
            "request": {"id": None, "idempotency_key": e.request_idempotency_key}, "type": e.type}


def _type_match(event_type: str, wanted: str) -> bool:
    """Stripe's event type filter: exact, or a `*` wildcard (`charge.*`)."""
    if "*" in wanted:
        head = wanted.split("*", 1)[0]
        return event_type.startswith(head)
    return event_type == wanted


class Events(StripeState):
    @api("stripe.events.list", "GET v1/events", "List events (what happened in the account), newest first.",
         params={"type": "e.g. charge.refunded", **CHARGE_PAGE})
    def events_list(self, type: str | None = None, limit: int | None = None, starting_after: str | None = None,
                    ending_before: str | None = None, expand: list[str] | None = None, created: IntRange | None = None,
                    types: list[str] | None = None) -> dict[str, Any]:
        if type is not None and types:
            raise invalid("You may only specify one of these parameters: type, types.", "types")
        wanted = [type] if type is not None else list(types or [])
        rows = [e for e in self.db.events.values() if not wanted or any(_type_match(e.type, w) for w in wanted)]
        return self.page(rows, _event_json, "/v1/events", limit, starting_after, ending_before, expand, created)

    @api("stripe.events.retrieve", "GET v1/events/{id}", "Retrieve an event.", params={"id": "evt_ id"})
    def events_retrieve(self, id: str, expand: list[str] | None = None) -> dict[str, Any]:
        e = self.db.events.get(id)
        if e is None:
            raise no_such("event", id)
        return self.expand(_event_json(e), expand)
