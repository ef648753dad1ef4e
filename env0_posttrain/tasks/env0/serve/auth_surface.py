"""The auth service on env0's surface: its requests (answered by workspace/auth_http.py and logged in env0's
action-log shape, which verifiers scan for `/web/login` and `/o/oauth2/v2/auth`), and the Bearer gate in front of
every resource server (Gmail, Calendar, Drive, Docs, Slack; Stripe checks its own) when the package sets
`AUTH_ENABLED=1` (services/auth/gate.py holds the rules). The gate sees the API method a request stands for: its
route, a `/_gws` call's method id, or the Drive method a mock-gdoc comment route maps onto.

An agent's tool calls pass the same gate in the workspace itself (workspace/tool_gate.py), with the token the tool
channel holds.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from ....workspace import auth_http
from ....workspace.dialects import dialect
from ....workspace.request_limits import loads
from ....workspace.api_routes import api_routes, path_owners, resolve, targets
from ....workspace.tools import TOOLS
from ..services import FACES, PREFIXES, WORKSPACE
from ....workspace.services import registry

GWS_SERVICES: dict[str, str] = {}  # gws's names -> ours
registry.watch(lambda: (GWS_SERVICES.clear(), GWS_SERVICES.update(
    {s.name: s.name for s in registry.SERVICES if s.env0 and s.env0.gws})))
BY_METHOD = {(s.service, s.method_id): s for s in TOOLS.values()}

# answered by the surface itself (env0's verifier reads); everything else under /auth goes to auth_http
AUTH_READS = ("/health", "/_admin/health", "/_admin/state", "/_admin/diff", "/_admin/action_log")
_UNLOGGED = AUTH_READS + ("/_admin/audit_log", "/_admin/metrics")
Raw = tuple[int, list[tuple[bytes, bytes]], bytes]


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _log(surface: Any, prefix: str, method: str, path: str, query: bytes, body: bytes, status: int) -> None:
    try:
        req = loads(body) if body.strip() else None
    except ValueError:
        req = {"_form": body.decode("utf-8", "replace")[:2000]}
    surface.log[prefix].append({"timestamp": datetime.now(timezone.utc).isoformat(), "method": method,
                                "path": path + (("?" + query.decode("latin-1")) if query else ""),
                                "user_id": "user1", "request_body": req, "response_status": status})


def answer_auth(surface: Any, prefix: str, scope: dict[str, Any], rest: str, body: bytes) -> Raw:
    """One request to the issuer's port (`prefix`) through auth_http (caller holds the workspace lock)."""
    headers = _headers(scope)
    query = scope.get("query_string", b"")
    host = headers.get("host")
    base = f"http://{host}" if host else surface.ws.auth.issuer  # the issuer is where the client reached us
    status, hdrs, payload = auth_http.answer(lambda n, a: surface.ws.call(n, a, source="env0"), scope["method"], rest,
                                             query, body, headers, base)
    if rest not in _UNLOGGED:
        _log(surface, prefix, scope["method"], rest, query, body, status)
    return status, [(k.encode(), v.encode()) for k, v in hdrs], payload


def _method(svc: str, scope: dict[str, Any], rest: str, body: bytes) -> tuple[str, Any, dict[str, Any]] | None:
    """(the service, the tool spec, its path and query arguments) a request to `svc`'s port stands for, whichever
    service that is; None: no API method (the API's own 404 / 405 answers it). The spec is None for Slack's upload
    step 2 (the bytes for an upload URL that files.getUploadURLExternal issued behind the gate)."""
    from urllib.parse import parse_qsl

    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    if rest == "/_gws":
        try:
            req = loads(body or b"{}")
        except ValueError:
            return None
        if not isinstance(req, dict):
            return None
        named = GWS_SERVICES.get(str(req.get("service")))
        if named is None:
            return None
        spec = BY_METHOD.get((named, str(req.get("method_id"))))
        params = req.get("params")
        return named, spec, params if isinstance(params, dict) else {}
    routes = FACES[svc].routes if svc in FACES else None
    if routes is not None and routes.pattern.fullmatch(rest):
        try:
            req = loads(body or b"{}")
        except ValueError:
            req = {}
        calls = routes.calls(scope["method"], rest, req if isinstance(req, dict) else {}) or []
        return (svc, TOOLS[calls[0][0]], calls[0][1]) if calls else None  # env0's Docs routes, Drive's methods
    route, params, _ = resolve(api_routes(), {"type": "http", "path": rest, "method": scope["method"], "root_path": ""})
    if route is None:
        return None
    spec = targets()[route.name].spec
    owner = spec.service if spec is not None else _route_owner(route.name)
    return owner, spec, {**query, **params}


def _route_owner(route: str) -> str:
    """The service whose env0 face claims a route that stands for no tool (Slack's upload step 2)."""
    return next(svc for svc, face in FACES.items() if route in face.own_routes)


def guard(surface: Any, prefix: str, scope: dict[str, Any], rest: str, body: bytes = b"") -> Raw | None:
    """What a port refuses before any handler runs, audited: a method of another service, or a path in another
    service's API that names no method (`/api/anything` on Gmail's port: each env0 container serves its own service
    only: its 404; a `/_gws` call naming another service: 400), and, behind AUTH_ENABLED, a guarded
    method without a good Bearer token (the API's 401 / 403, Slack's `ok: false`), on its own port and on the
    workspace listener alike. A Gmail request made with
    another account's token is answered here, run as that account. None lets the request through."""
    svc = str(PREFIXES.get(prefix))
    if rest in AUTH_READS or (rest.startswith("/_") and rest != "/_gws"):
        return None
    found = _method(svc, scope, rest, body)
    if found is None:  # no API method: this port's own API answers it (its 404 / 405), unless the path is another's
        owners = path_owners(rest) if prefix != WORKSPACE.prefix and rest != "/_gws" else frozenset()
        return _elsewhere(surface, prefix, scope, rest, "/".join(sorted(owners)), None) \
            if owners and svc not in owners else None
    named, spec, params = found
    if prefix == WORKSPACE.prefix:  # every service's methods, each behind its own service's gate
        home = _home(named)
        if home is None:  # the Admin SDK: no env0 port, no gate
            return None
        prefix, svc = home, named
    elif named != svc:
        return _elsewhere(surface, prefix, scope, rest, named, spec)
    guard = registry.guard()
    if not surface.extras.get("auth_enabled") or svc not in guard.guarded or spec is None:
        return None
    headers = _headers(scope)
    d = dialect(svc)
    token = d.bearer(headers, scope.get("query_string", b""), body)
    try:
        other = guard.authorize(surface.ws, spec, token, params)
    except guard.refused as r:
        e = d.refusal(r)
        status, out = e.status, e.body
        extra = [(k.lower().encode(), v.encode()) for k, v in getattr(e, "headers", {}).items()]
        _log(surface, prefix, scope["method"], rest, scope.get("query_string", b""), b"", status)
        return status, [(b"content-type", b"application/json"), *extra], json.dumps(out).encode()
    if other is None:
        return None
    # a second account's token: the call names that account's mailbox (Gmail's userId), so the action log (and an
    # imported task's replayed oracle) carries which mailbox it acted in
    email = surface.ws.auth.db.users[other].email
    if rest == "/_gws":
        req = loads(body)
        req["params"] = {**(req.get("params") or {}), "userId": email}
        status, payload = surface.gws_call(prefix, req)
        return status, [(b"content-type", b"application/json")], payload
    path = re.sub(r"^/gmail/v1/users/me(?=/|$)", f"/gmail/v1/users/{quote(email, safe='@')}", rest)
    status, payload = surface.api(prefix, scope["method"], path, scope.get("query_string", b""), body,
                                  headers.get("content-type", ""), scope["headers"])
    return status, [(b"content-type", b"application/json")], payload


def _home(service: str) -> str | None:
    return next((p for p, s in PREFIXES.items() if s == service), None)


def service_prefix(surface: Any, scope: dict[str, Any], body: bytes) -> str | None:
    """The env0 port (its prefix) that serves the method a workspace-listener request names; None: none does."""
    found = _method("", scope, scope["path"], body)
    return _home(found[0]) if found is not None else None


def _elsewhere(surface: Any, prefix: str, scope: dict[str, Any], rest: str, named: str, spec: Any) -> Raw:
    """A request for another service's method on this port: refused as env0's container refuses a path it does not
    serve (404; `/_gws`: 400 naming the service), logged on this port and audited as `cross_service_request`."""
    svc = PREFIXES[prefix]
    surface.ws.auth.log_event("cross_service_request", details={
        "port": prefix, "port_service": svc, "requested_service": named, "route": rest,
        "method": spec.method_id if spec is not None else None})
    if rest == "/_gws":
        status, out = 400, {"error": {"code": 400, "reason": "wrongService", "message":
                                      f"gws: this is the {svc} service; {named} methods are served at its own URL"}}
    else:
        status, out = 404, {"detail": "Not Found"}
    _log(surface, prefix, scope["method"], rest, scope.get("query_string", b""), b"", status)
    return status, [(b"content-type", b"application/json")], json.dumps(out).encode()
