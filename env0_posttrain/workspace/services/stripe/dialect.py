"""Stripe's REST conventions: form-encoded POST bodies, API keys and Idempotency-Key in the headers, and Stripe's
error object (errors.py) with the HTTP status Stripe gives each kind: 400 invalid request, 401 bad key, 402 card
error, 403 missing permission, 404 no such object. Its verbs call the wire module beside it: Stripe's own API keys
guard a tool call when the account asks for them, and the wire module answers Stripe's HTTP requests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...dialects.base import Dialect
from ...errors import ApiError
from .errors import stripe_error, unknown_route
from .wire import answer, check_access

if TYPE_CHECKING:
    from ...environment import Workspace
    from ...tools import ToolSpec


class Stripe(Dialect):
    family = "stripe"
    keyed_requests = True
    form_bodies = True

    def tool_name(self, service: str, method_id: str) -> str:
        return "_".join([service, *method_id.split(".")[1:]])

    def arg_error(self, message: str, param: str | None, code: str | None = None) -> ApiError:
        return stripe_error(400, message, param=param, code=code)

    def missing_arg(self, name: str) -> ApiError:
        return self.arg_error(f"Missing required param: {name}.", name, "parameter_missing")

    def unknown_arg(self, name: str) -> ApiError:
        return self.arg_error(f"Received unknown parameter: {name}", name, "parameter_unknown")

    def bad_value(self, kind: str | None, name: str, value: Any) -> ApiError:
        """Stripe's own wording and codes for a value of the wrong type."""
        if kind == "integer":
            return self.arg_error(f"Invalid integer: {str(value)[:60]}", name, "parameter_invalid_integer")
        if kind == "boolean":
            return self.arg_error(f"Invalid boolean: {str(value)[:60]}", name)
        if kind in ("object", "array"):
            return self.arg_error(f"Invalid {'hash' if kind == 'object' else 'array'}", name)
        return super().bad_value(kind, name, value)

    def internal_error(self) -> ApiError:
        return ApiError(500, {"error": {"type": "api_error", "message": "An unknown error occurred."}})

    def own_gate(self, ws: Workspace) -> bool | None:
        return ws.stripe.db.auth_required

    def check_credential(self, ws: Workspace, spec: ToolSpec, credential: str | None) -> ApiError | None:
        try:
            check_access(ws, spec, credential)
        except ApiError as e:
            return e
        return None

    def answer_http(self, ws: Workspace, spec: ToolSpec, path_params: dict[str, str], query: list[tuple[str, str]],
                    body: bytes, ctype: str, headers: list[tuple[bytes, bytes]], base_url: str) -> tuple[int, Any] | None:
        named = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
        return answer(ws, spec, path_params, query, body, ctype, named)

    def http_gate(self, ws: Workspace, spec: ToolSpec, guard: Any, headers: dict[str, str], query: bytes, body: bytes,
                  params: dict[str, Any]) -> ApiError | None:
        """None: Stripe checks its own API keys (`answer_http`, the wire module)."""
        return None

    def unrouted(self, method: str, path: str) -> tuple[int, dict[str, Any]] | None:
        if path.startswith("/v1/") and not path.startswith("/v1/documents"):  # Docs' paths start /v1/documents
            return 404, unknown_route(method, path)
        return None


STRIPE = Stripe()
