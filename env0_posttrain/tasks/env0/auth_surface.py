"""The auth service on env0's surface: its requests (answered by workspace/auth_http.py and logged in env0's
action-log shape, which verifiers scan for `/web/login` and `/o/oauth2/v2/auth`), and the Bearer gate in front of
Gmail when the package sets `AUTH_ENABLED=1` (services/auth/gate.py holds the rules).

The gate guards HTTP only: an agent's tool calls come through the tool channel, which already is the agent.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from ...workspace import auth_http
from ...workspace.api_routes import api_routes, resolve, targets
from ...workspace.errors import ApiError
from ...workspace.services.auth.gate import GUARDED, check
from .services import PREFIXES

# answered by the surface itself (env0's verifier reads); everything else under /auth goes to auth_http
AUTH_READS = ("/health", "/_admin/health", "/_admin/state", "/_admin/diff", "/_admin/action_log")
_UNLOGGED = AUTH_READS + ("/_admin/audit_log", "/_admin/metrics")
Raw = tuple[int, list[tuple[bytes, bytes]], bytes]


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _log(surface: Any, prefix: str, method: str, path: str, query: bytes, body: bytes, status: int) -> None:
    try:
        req = json.loads(body) if body.strip() else None
    except ValueError:
        req = {"_form": body.decode("utf-8", "replace")[:2000]}
    surface.log[prefix].append({"timestamp": datetime.now(timezone.utc).isoformat(), "method": method,
                                "path": path + (("?" + query.decode("latin-1")) if query else ""),
                                "user_id": "user1", "request_body": req, "response_status": status})


def answer_auth(surface: Any, scope: dict[str, Any], rest: str, body: bytes) -> Raw:
    """One auth request through auth_http (caller holds the workspace lock)."""
    headers = _headers(scope)
    query = scope.get("query_string", b"")
    host = headers.get("host")
    base = f"http://{host}" if host else surface.ws.auth.issuer  # the issuer is where the client reached us
    status, hdrs, payload = auth_http.answer(lambda n, a: surface.ws.call(n, a, source="env0"), scope["method"], rest,
                                             query, body, headers, base)
    if rest not in _UNLOGGED:
        _log(surface, "auth", scope["method"], rest, query, body, status)
    return status, [(k.encode(), v.encode()) for k, v in hdrs], payload


def guard(surface: Any, prefix: str, scope: dict[str, Any], rest: str, body: bytes = b"") -> Raw | None:
    """Google's 401 / 403 for a guarded API request without a good Bearer token, or the answer of a request made
    with another account's token (run as that account); None lets the request through."""
    svc = PREFIXES.get(prefix)
    if not surface.extras.get("auth_enabled") or svc not in GUARDED or rest.startswith("/_") or rest == "/health":
        return None
    route, params, _ = resolve(api_routes(), {"type": "http", "path": rest, "method": scope["method"], "root_path": ""})
    if route is None:
        return None  # the API's own 404 / 405
    spec = targets()[route.name].spec
    if spec is None:
        return None
    headers = _headers(scope)
    try:
        other = check(surface.ws, spec, headers.get("authorization"), params)
    except ApiError as e:
        _log(surface, prefix, scope["method"], rest, scope.get("query_string", b""), b"", e.status)
        extra = [(k.lower().encode(), v.encode()) for k, v in getattr(e, "headers", {}).items()]
        return e.status, [(b"content-type", b"application/json"), *extra], json.dumps(e.body).encode()
    if other is None:
        return None
    # a second account's token: the call names that account's mailbox (Gmail's userId), so the action log (and an
    # imported task's replayed oracle) carries which mailbox it acted in
    email = surface.ws.auth.db.users[other].email
    path = re.sub(r"^/gmail/v1/users/me(?=/|$)", f"/gmail/v1/users/{quote(email, safe='@')}", rest)
    status, payload = surface.api(prefix, scope["method"], path, scope.get("query_string", b""), body,
                                  headers.get("content-type", ""), scope["headers"])
    return status, [(b"content-type", b"application/json")], payload
