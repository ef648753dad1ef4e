"""Stripe's dialect with its verbs: Stripe's own API keys guard a tool call when the account asks for them, and an
HTTP request is answered by the wire module (form bodies, keys, Idempotency-Key). Its wire conventions (names, errors)
are dialects/stripe.py's; the verbs live here, beside the wire module they call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...dialects.stripe import Stripe
from ...errors import ApiError
from .wire import answer, check_access

if TYPE_CHECKING:
    from ...environment import Workspace
    from ...tools import ToolSpec


class StripeWire(Stripe):
    def own_gate(self, ws: Workspace) -> bool | None:
        return ws.stripe.db.auth_required

    def check_credential(self, ws: Workspace, spec: ToolSpec, credential: str | None) -> ApiError | None:
        try:
            check_access(ws, spec, credential)
        except ApiError as e:
            return e
        return None

    def answer_http(self, ws: Workspace, spec: ToolSpec, path_params: dict[str, str], query: list[tuple[str, str]],
                    body: bytes, ctype: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, Any] | None:
        named = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
        return answer(ws, spec, path_params, query, body, ctype, named)


STRIPE = StripeWire()
