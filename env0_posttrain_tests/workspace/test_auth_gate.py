"""The auth gate on every resource server an env0 package reaches (AUTH_ENABLED=1): Gmail, Calendar, Drive, Docs and
Slack through the surface's gate, Stripe through its own; per service a request without a token, with a garbage
token, with a revoked one, with a token of the wrong scope, and with the route's scope."""

from __future__ import annotations

import json
import types

import pytest

from env0_posttrain.tasks.env0.seed.auth import seed_auth
from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.tasks.env0.services import PREFIXES
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain.workspace.services.auth.gate import SLACK, google_scopes, required_scopes
from env0_posttrain.workspace.tools import TOOLS
from env0_posttrain_tests.support.paths import REPO

EVERY = ["gmail.readonly", "gmail.full", "calendar.readonly", "calendar.events", "drive.readonly", "drive.full",
         "docs.full", "channels:read", "chat:write", "stripe.customers.read", "stripe.charges.read"]


def _world() -> tuple[Workspace, Env0Surface]:
    ws = Workspace.seeded(0)
    seed_auth(ws, types.ModuleType("needles"), {})
    ws.auth.add_client(client_id="tester", allowed_scopes=EVERY, grant_types=["client_credentials"])
    ws.stripe.db.auth_required = True  # what stripe_seeding does for an AUTH_ENABLED=1 package
    return ws, Env0Surface(ws, {"auth_enabled": True})


def _token(ws: Workspace, *scopes: str, user: str = "user1") -> str:
    res = ws.call("auth_admin_issueToken", {"client_id": "tester", "user_id": user, "scopes": list(scopes),
                                            "include_refresh": False})
    assert res.ok, res.body
    return res.body["access_token"]


# prefix, verb, path, JSON body, the route's scope, a scope of another route
CASES = {
    "gmail": ("GET", "/gmail/v1/users/me/messages", None, "gmail.readonly", "calendar.readonly"),
    "gcal": ("GET", "/calendar/v3/calendars/primary/events", None, "calendar.readonly", "drive.readonly"),
    "gdrive": ("GET", "/drive/v3/files", None, "drive.readonly", "calendar.events"),
    "gdoc": ("POST", "/v1/documents", {"title": "Gate check"}, "docs.full", "drive.readonly"),
    "slack": ("GET", "/api/conversations.list", None, "channels:read", "chat:write"),
    "stripe": ("GET", "/v1/customers", None, "stripe.customers.read", "stripe.charges.read"),
}


def _send(surface: Env0Surface, prefix: str, token: str | None) -> tuple[int, dict]:
    verb, path, body, _, _ = CASES[prefix]
    headers = [(b"content-type", b"application/json")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    status, _, payload = surface.respond(prefix, verb, path, b"", headers, json.dumps(body).encode() if body else b"")
    return status, json.loads(payload)


def _refused(prefix: str, status: int, out: dict, kind: str) -> bool:
    """The service's own refusal of `kind` (`auth`: 401-like, `scope`: 403-like)."""
    if prefix == "slack":
        return status == 200 and out["ok"] is False and out["error"] in (
            {"missing_scope"} if kind == "scope" else {"not_authed", "invalid_auth", "token_revoked"})
    if prefix == "stripe":
        return status == (403 if kind == "scope" else 401) and out["error"]["type"] == "invalid_request_error"
    want = (403, "PERMISSION_DENIED") if kind == "scope" else (401, "UNAUTHENTICATED")
    return (status, out["error"]["status"]) == want


@pytest.mark.parametrize("prefix", list(CASES))
def test_each_resource_server_refuses_missing_garbage_revoked_and_wrong_scope_tokens(prefix: str):
    ws, surface = _world()
    _, _, _, right, wrong = CASES[prefix]
    service = PREFIXES[prefix]
    before = ws.state_hash(service)
    for token in (None, "garbage", "eyJhbGciOiJFZERTQSJ9.e30.AAAA"):
        status, out = _send(surface, prefix, token)
        assert _refused(prefix, status, out, "auth"), (token, status, out)
    revoked = _token(ws, right)
    assert ws.call("auth_revoke", {"token": revoked}).ok
    status, out = _send(surface, prefix, revoked)
    assert _refused(prefix, status, out, "auth"), (status, out)
    status, out = _send(surface, prefix, _token(ws, wrong))
    assert _refused(prefix, status, out, "scope"), (status, out)
    if prefix == "slack":  # Slack's refusal names the scope the method needs
        assert right in out["needed"].split(",")
    assert ws.state_hash(service) == before  # nothing refused acted
    status, out = _send(surface, prefix, _token(ws, right))
    assert status == 200 and (out.get("ok") is not False), out


@pytest.mark.parametrize("prefix", ["gcal", "gdrive", "slack"])
def test_revoking_the_consent_scope_kills_the_token_on_every_server(prefix: str):
    ws, surface = _world()
    right = CASES[prefix][3]
    ws.auth.add_consent(user_id="user1", client_id="tester", scopes=[right])
    token = _token(ws, right)
    assert _send(surface, prefix, token)[0] == 200
    res = ws.call("auth_admin_revokeScope", {"user_id": "user1", "client_id": "tester", "scope": right})
    assert res.ok, res.body
    status, out = _send(surface, prefix, token)
    assert _refused(prefix, status, out, "auth"), (status, out)


def test_another_accounts_token_is_refused_off_gmail_and_audited():
    ws, surface = _world()
    status, out = _send(surface, "gcal", _token(ws, "calendar.readonly", user="user2"))
    assert status == 403 and out["error"]["errors"][0]["reason"] == "forbidden"
    kinds = [e.event_type for e in ws.auth.db.audit.values()]
    assert "impersonation_attempt" in kinds


def test_the_gate_audits_resource_access_with_the_scope_used():
    ws, surface = _world()
    assert _send(surface, "gdrive", _token(ws, "drive.readonly"))[0] == 200
    last = list(ws.auth.db.audit.values())[-1]
    assert (last.event_type, last.details["scope_used"], last.details["route"]) == \
        ("resource_access", "drive.readonly", "/drive/v3/files")


def test_gws_calls_are_gated_with_the_clis_token():
    ws, surface = _world()
    req = json.dumps({"service": "drive", "method_id": "drive.files.list", "params": {"pageSize": 1}}).encode()
    status, _, _ = surface.respond("gdrive", "POST", "/_gws", b"", [(b"content-type", b"application/json")], req)
    assert status == 401
    bearer = [(b"authorization", f"Bearer {_token(ws, 'drive.readonly')}".encode())]
    status, _, payload = surface.respond("gdrive", "POST", "/_gws", b"", bearer, req)
    assert status == 200 and "files" in json.loads(payload)


def test_slack_takes_the_token_as_a_form_argument_too():
    ws, surface = _world()
    body = f"token={_token(ws, 'channels:read')}".encode()
    status, _, payload = surface.respond("slack", "POST", "/api/conversations.list", b"",
                                         [(b"content-type", b"application/x-www-form-urlencoded")], body)
    assert status == 200 and json.loads(payload)["ok"] is True


def test_every_guarded_method_has_scopes_and_the_table_matches_the_discovery_documents():
    import importlib.util
    import sys

    for spec in TOOLS.values():
        if spec.service in ("calendar", "drive", "docs", "gmail"):
            assert required_scopes(spec), spec.name
        if spec.service == "slack":
            assert spec.method_id in SLACK, spec.method_id
    pytest.importorskip("googleapiclient")
    path = REPO / "bench" / "google_scopes.py"
    mod_spec = importlib.util.spec_from_file_location("google_scopes_bench", path)
    mod = importlib.util.module_from_spec(mod_spec)
    sys.modules["google_scopes_bench"] = mod
    mod_spec.loader.exec_module(mod)
    assert {k: list(v) for k, v in google_scopes().items()} == mod.table()["methods"]
