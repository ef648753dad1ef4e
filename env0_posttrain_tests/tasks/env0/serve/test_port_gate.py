"""Every method of every service on every env0 port: a port serves its own service only, and behind
AUTH_ENABLED its methods (on their port and on the whole workspace's listener alike) refuse a request without a token, with a garbage one, a revoked one and one without the
method's scope. Each refusal answers before any handler runs (no service's state moves) and leaves one audit
event naming the route; a request for another service's method is refused on every port, `/_gws` included."""

from __future__ import annotations

import json
import re
import types
from collections import Counter

import pytest

from env0_posttrain.tasks.env0.seed.auth import seed_auth
from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.tasks.env0.services import PREFIXES, WORKSPACE
from env0_posttrain.workspace.environment import SERVICE_NAMES, Workspace
from env0_posttrain.workspace.services.auth.gate import required_scopes
from env0_posttrain.workspace.services.stripe.wire import permission
from env0_posttrain.workspace.tools import TOOLS, ToolSpec

SERVED = [s for s in TOOLS.values() if s.service != "auth"]  # auth's own paths are the auth port's (auth_http)
GWS = {"gmail": "gmail", "calendar": "calendar", "drive": "drive", "docs": "docs"}
PORTS = [*PREFIXES.items(), (WORKSPACE.prefix, "*")]  # env0's ports, and the listener for the whole workspace
EVENT = {"missing": "unauthenticated_request", "garbage": "unauthenticated_request", "revoked": "revoked_token_use",
         "scope": "scope_escalation_attempt"}


@pytest.fixture(scope="module")
def world() -> tuple[Workspace, Env0Surface, dict[str, str]]:
    ws = Workspace.seeded(0)
    seed_auth(ws, types.ModuleType("needles"), {})
    ws.auth.add_client(client_id="tester", allowed_scopes=["openid"], grant_types=["client_credentials"])
    ws.stripe.db.auth_required = True  # what stripe_seeding does for an AUTH_ENABLED=1 package
    surface = Env0Surface(ws, {"auth_enabled": True})
    tokens = {}
    for kind in ("scope", "revoked"):
        res = ws.call("auth_admin_issueToken", {"client_id": "tester", "user_id": "user1", "scopes": ["openid"],
                                                "include_refresh": False})
        tokens[kind] = res.body["access_token"]
    assert ws.call("auth_revoke", {"token": tokens["revoked"]}).ok
    tokens["garbage"] = "eyJhbGciOiJFZERTQSJ9.e30.AAAA"
    return ws, surface, tokens


def _path(template: str) -> str:
    path = re.sub(r"{\+?userId}", "me", template)
    return "/" + re.sub(r"{\+?\w+}", "x1", path).lstrip("/")


def _requests(spec: ToolSpec) -> list[tuple[str, str, bytes]]:
    """(verb, path, body) of every way the method is reached over HTTP: its path, its upload path, and gws."""
    if spec.service == "slack":
        return [("POST", f"/api/{spec.method_id}", b"")]
    out = [(spec.http_method, _path(spec.path), b"")]
    if spec.upload_path:
        out.append((spec.http_method, _path(spec.upload_path), b""))
    if spec.service in GWS:
        req = {"service": spec.service, "method_id": spec.method_id, "params": {p: "me" if p == "userId" else "x1" for p in spec.path_params}}
        out.append(("POST", "/_gws", json.dumps(req).encode()))
    return out


def _needs_scope(spec: ToolSpec) -> bool:
    return spec.service in PREFIXES.values() and (spec.service == "stripe" or bool(required_scopes(spec)))


def _refused(service: str, kind: str, status: int, out: dict) -> bool:
    if service == "slack":
        return status == 200 and out["ok"] is False and out["error"] == (
            "missing_scope" if kind == "scope" else
            {"missing": "not_authed", "garbage": "invalid_auth", "revoked": "token_revoked"}[kind])
    if service == "stripe":
        return status == (403 if kind == "scope" else 401) and out["error"]["type"] == "invalid_request_error"
    return (status, out["error"]["status"]) == ((403, "PERMISSION_DENIED") if kind == "scope" else (401, "UNAUTHENTICATED"))


def _send(surface: Env0Surface, prefix: str, verb: str, path: str, body: bytes, token: str | None) -> tuple[int, dict]:
    headers = [(b"content-type", b"application/json")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    status, _, payload = surface.respond(prefix, verb, path, b"", headers, body)
    return status, json.loads(payload)


def test_every_method_on_every_port_is_refused_and_audited_without_a_good_token(world):
    ws, surface, tokens = world
    before = {s: ws.state_hash(s) for s in SERVICE_NAMES if s != "auth"}
    audit = ws.auth.db.audit
    seen: Counter[str] = Counter()
    for spec in SERVED:
        for verb, path, body in _requests(spec):
            for prefix, port_service in PORTS:
                if port_service == "*" and spec.service not in PREFIXES.values():
                    continue  # the Admin SDK on the workspace listener: no env0 port, no gate (not walked here)
                kinds = ["missing", "garbage", "revoked"] + (["scope"] if _needs_scope(spec) else [])
                for kind in kinds:
                    mark = len(audit)
                    status, out = _send(surface, prefix, verb, path, body, tokens.get(kind))
                    what = (spec.method_id, prefix, path, kind, status, out)
                    events = list(audit.values())[mark:]
                    assert len(events) == 1, what  # one refusal, one audit event
                    ev = events[0]
                    if port_service not in (spec.service, "*"):
                        assert (status, out) == ((400, out) if path == "/_gws" else (404, {"detail": "Not Found"})), what
                        assert path != "/_gws" or out["error"]["reason"] == "wrongService", what
                        assert (ev.event_type, ev.details["requested_service"], ev.details["port"]) == \
                            ("cross_service_request", spec.service, prefix), what
                        seen["elsewhere"] += 1
                        continue
                    assert _refused(spec.service, kind, status, out), what
                    assert ev.event_type == EVENT[kind], (what, ev)
                    assert ev.details["route"] == ("/" + spec.path if spec.service != "slack" else
                                                   f"/api/{spec.method_id}"), (what, ev)
                    seen[kind] += 1
    assert {s: ws.state_hash(s) for s in before} == before  # nothing refused acted
    served_here = 2 * sum(len(_requests(s)) for s in SERVED if s.service in PREFIXES.values())  # own port, workspace
    assert seen["missing"] == seen["garbage"] == seen["revoked"] == served_here
    assert seen["scope"] == 2 * sum(len(_requests(s)) for s in SERVED if _needs_scope(s))
    assert seen["elsewhere"] > 3 * served_here  # every other port, per way in (the admin API is on none)


def test_the_methods_scope_lets_the_same_request_through_on_its_own_port_only(world):
    """The counterpart: with the method's scope the gate steps aside on the method's port (the API answers, not the
    gate) and another port still refuses it."""
    ws, surface, _ = world
    for name, prefix in (("gmail_labels_list", "gmail"), ("calendar_calendarList_list", "gcal"),
                         ("drive_files_list", "gdrive"), ("slack_conversations_list", "slack"),
                         ("stripe_customers_list", "stripe")):
        spec = TOOLS[name]
        need = sorted(required_scopes(spec)) if spec.service != "stripe" else [f"stripe.{permission(spec)[0]}.read"]
        token = ws.call("auth_admin_issueToken", {"client_id": "tester", "user_id": "user1", "scopes": need[:1],
                                                  "include_refresh": False}).body["access_token"]
        for verb, path, body in _requests(spec):
            status, out = _send(surface, prefix, verb, path, body, token)
            assert status == 200 and out.get("ok") is not False, (name, path, out)
            other = "gdoc" if prefix != "gdoc" else "gmail"
            status, _ = _send(surface, other, verb, path, body, token)
            assert status in (400, 404), (name, path, other)
            status, out = _send(surface, WORKSPACE.prefix, verb, path, body, token)
            assert status == 200 and out.get("ok") is not False, (name, path, "workspace", out)
