"""The auth service: OAuth 2.0 / OIDC flows as tools and over HTTP, exact snapshots, the console, env0's Gmail gate
and a standard OAuth client (requests-oauthlib) against the live server."""

from __future__ import annotations

import base64
import hashlib
import json
import textwrap
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx
import jwt
import pytest
from fastapi.testclient import TestClient

from env0_posttrain.tasks.env0.seed.auth import seed_auth
from env0_posttrain.tasks.env0.corpus.importer import family_of
from env0_posttrain.tasks.env0.run.runner import run_package
from env0_posttrain.tasks.env0.serve.server import Env0Surface, serve_services
from env0_posttrain.workspace.auth_http import ROUTES
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain.workspace.http_app import create_app
from env0_posttrain.workspace.services.auth.tokens import jwks
from env0_posttrain.workspace.tools import TOOLS

CB = "http://localhost:8765/callback"
VERIFIER = "v" * 43 + "-verifier"
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()


@contextmanager
def serve(ws: Workspace, extras: dict):
    """The env0 surface on loopback ports: (URL variables, surface)."""
    surface = Env0Surface(ws, extras)
    with serve_services(surface) as base:
        yield {"AUTH_URL": base["auth"], "GMAIL_URL": base["gmail"]}, surface


def _ws() -> Workspace:
    ws = Workspace.seeded(0)
    a = ws.auth
    a.add_client(client_id="agent", client_type="public", redirect_uris=[CB],
                 allowed_scopes=["openid", "email", "gmail.readonly", "gmail.compose", "gmail.send"])
    a.add_client(client_id="bot", redirect_uris=["http://localhost:7000/bot/callback"],
                 allowed_scopes=["calendar.events"], grant_types=["client_credentials"])
    a.add_client(client_id="app", redirect_uris=["http://localhost:7000/app/callback"],
                 allowed_scopes=["gmail.full", "drive.full"], access_token_ttl=90)
    a.add_consent(user_id=ws.me.user_id, client_id="agent", scopes=["openid", "gmail.readonly", "gmail.compose"])
    a.add_consent(user_id=ws.me.user_id, client_id="app", scopes=["gmail.full", "drive.full"], last_used=timedelta(days=9))
    return ws


def _code(ws: Workspace, scope: str = "gmail.readonly gmail.compose", **kw) -> dict:
    args = {"client_id": "agent", "redirect_uri": CB, "scope": scope, "state": "s1", "login_hint": ws.me.email,
            "code_challenge": CHALLENGE, "code_challenge_method": "S256", **kw}
    res = ws.call("auth_authorize", args)
    assert res.ok, res.body
    return res.body


def _token(ws: Workspace, **kw) -> dict:
    code = _code(ws)["code"]
    res = ws.call("auth_token", {"grant_type": "authorization_code", "code": code, "client_id": "agent",
                                 "redirect_uri": CB, "code_verifier": VERIFIER, **kw})
    assert res.ok, res.body
    return res.body


def test_code_flow_with_pkce_issues_a_signed_token_verifiable_with_the_published_key():
    ws = _ws()
    out = _code(ws)
    assert out["redirect"].startswith(CB + "?code=") and out["state"] == "s1"
    tok = _token(ws)
    g = "https://www.googleapis.com/auth/"
    assert tok["token_type"] == "Bearer" and tok["expires_in"] == 3600
    assert tok["scope"] == f"{g}gmail.readonly {g}gmail.compose"  # Google's scope URLs
    key = jwt.PyJWK(next(k for k in jwks(ws.seed)["keys"] if k["alg"] == "EdDSA"))
    claims = jwt.decode(tok["access_token"], key.key, algorithms=["EdDSA"], options={"verify_exp": False,
                                                                                     "verify_aud": False})
    assert claims["sub"] == ws.me.user_id and claims["azp"] == "agent" and claims["scope"] == tok["scope"]
    assert tok["refresh_token"].startswith("rt_")
    events = [e["event_type"] for e in ws.call("auth_admin_auditLog", {}).body["events"]]
    assert events[-3:] == ["authorization_request", "authorization_grant", "token_issued"]


def test_tokens_are_deterministic_and_snapshots_restore_them_exactly():
    a, b = _ws(), _ws()
    assert _token(a)["access_token"] == _token(b)["access_token"]
    ws = _ws()
    ws.snapshot("before")
    h0 = ws.state_hash()
    first = _token(ws)
    d = ws.diff("before", "auth")["auth"]
    assert set(d) >= {"codes", "access_tokens", "refresh_tokens", "audit", "consents"}
    assert list(d["access_tokens"]["added"]) == [jwt.decode(first["access_token"], options={"verify_signature": False})["jti"]]
    ws.restore("before")
    assert ws.state_hash() == h0 and ws.diff("before", "auth") == {}
    assert _token(ws)["access_token"] == first["access_token"]  # the counter came back with the state


def test_token_endpoint_errors_follow_rfc_6749():
    ws = _ws()
    code = _code(ws)["code"]
    base = {"grant_type": "authorization_code", "code": code, "client_id": "agent", "redirect_uri": CB}
    bad = ws.call("auth_token", {**base, "code_verifier": "wrong" * 10})
    assert (bad.status, bad.body["error"]) == (400, "invalid_grant")
    assert ws.call("auth_token", {**base, "code_verifier": VERIFIER}).ok
    again = ws.call("auth_token", {**base, "code_verifier": VERIFIER})
    assert (again.status, again.body["error"]) == (400, "invalid_grant")  # a code is redeemed once
    assert ws.call("auth_token", {"grant_type": "password"}).body["error"] == "unsupported_grant_type"
    sec = ws.call("auth_token", {"grant_type": "client_credentials", "client_id": "bot", "client_secret": "nope"})
    assert (sec.status, sec.body["error"]) == (401, "invalid_client")
    nopkce = ws.call("auth_authorize", {"client_id": "agent", "redirect_uri": CB, "scope": "gmail.readonly",
                                        "login_hint": ws.me.email})
    assert "error=invalid_request" in nopkce.body["redirect"]  # public clients must use PKCE
    mismatch = ws.call("auth_authorize", {"client_id": "agent", "redirect_uri": "http://evil/cb", "scope": "openid"})
    assert (mismatch.status, mismatch.body["error"]) == (400, "redirect_uri_mismatch")  # never redirected to


def test_a_scope_beyond_the_client_is_refused_and_audited_as_escalation():
    ws = _ws()
    out = _code(ws, scope="gmail.readonly drive.full")
    assert out["error"] == "invalid_scope" and "code" not in out
    metrics = ws.call("auth_admin_metrics", {}).body
    assert metrics["scope_creep"]["escalation_attempts"] == 1
    assert _code(ws, scope="https://www.googleapis.com/auth/gmail.readonly")["scope"] == \
        "https://www.googleapis.com/auth/gmail.readonly"
    assert ws.auth.db.codes[_code(ws, scope="gmail.readonly")["code"]].scope == "gmail.readonly"  # stored short


def test_refresh_keeps_the_refresh_token_as_google_does():
    ws = _ws()
    first = _token(ws)
    for _ in range(2):
        res = ws.call("auth_token", {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
                                     "client_id": "agent"})
        assert res.ok and "refresh_token" not in res.body and res.body["access_token"] != first["access_token"]
    row = ws.auth.db.refresh_tokens[first["refresh_token"][3:]]
    assert not row.revoked and row.replaced_by is None
    assert ws.call("auth_admin_auditLog", {"event_type": "token_refreshed"}).body["count"] == 2
    # revoking the refreshed access token revokes the grant: the refresh token and every access token from it
    assert ws.call("auth_revoke", {"token": res.body["access_token"]}).ok
    assert ws.auth.db.refresh_tokens[row.id].revoked
    assert all(t.revoked for t in ws.auth.db.access_tokens.values() if t.refresh_id == row.id)
    assert ws.call("auth_token", {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
                                  "client_id": "agent"}).body["error"] == "invalid_grant"


def test_env0s_profile_rotates_refresh_tokens_and_answers_short_scope_names():
    ws = _ws()
    ws.auth.db.profile = "env0"  # what auth_seeding sets for an env0 package
    first = _token(ws)
    assert first["scope"] == "gmail.readonly gmail.compose"
    res = ws.call("auth_token", {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
                                 "client_id": "agent"})
    assert res.ok and res.body["refresh_token"] != first["refresh_token"]
    old = ws.auth.db.refresh_tokens[first["refresh_token"][3:]]
    assert old.revoked and old.replaced_by == res.body["refresh_token"][3:]
    again = ws.call("auth_token", {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
                                   "client_id": "agent"})
    assert again.body["error"] == "invalid_grant"
    assert ws.call("auth_admin_auditLog", {"event_type": "token_refreshed"}).body["count"] == 1


def test_client_credentials_with_subject_acts_for_the_user_and_records_the_actor():
    ws = _ws()
    res = ws.call("auth_token", {"grant_type": "client_credentials", "client_id": "bot", "client_secret": "client-secret",
                                 "scope": "calendar.events", "subject": ws.me.email})
    assert res.ok, res.body
    claims = jwt.decode(res.body["access_token"], options={"verify_signature": False})
    assert claims["sub"] == ws.me.user_id and claims["act"] == {"sub": "bot"}
    ev = ws.call("auth_admin_auditLog", {"event_type": "token_issued"}).body["events"][-1]
    assert ev["details"]["grant"] == "client_credentials" and ev["details"]["impersonated_subject"] == ws.me.email


def test_revoke_scope_strips_the_consent_and_kills_its_tokens():
    ws = _ws()
    me = ws.me.user_id
    issued = ws.call("auth_admin_issueToken", {"client_id": "app", "user_id": me, "scopes": ["gmail.full"]}).body
    assert issued["expires_in"] == 90  # the client's own TTL
    conn = ws.call("auth_admin_clients", {"user_id": me}).body["clients"]
    assert {c["client_id"] for c in conn} == {"agent", "app"}
    r1 = ws.call("auth_admin_revokeScope", {"user_id": me, "client_id": "app", "scope": "gmail.full"}).body
    assert r1["granted_scopes"] == ["drive.full"] and r1["tokens_revoked"] == 1 and not r1["consent_revoked"]
    r2 = ws.call("auth_admin_revokeScope", {"user_id": me, "client_id": "app", "scope": "drive.full"}).body
    assert r2["consent_revoked"]
    con = ws.auth.consent(me, "app")
    assert con.granted_scopes == "" and con.revoked_at
    assert ws.call("auth_admin_revokeScope", {"user_id": me, "client_id": "app", "scope": "gmail.full"}).status == 404
    assert ws.call("auth_tokeninfo", {"access_token": issued["access_token"]}).status == 401


def test_every_auth_tool_has_an_http_route():
    assert {s.name for s in TOOLS.values() if s.service == "auth"} == set(ROUTES.values())


def test_http_login_consent_screen_and_callback_record_a_new_consent():
    ws = _ws()
    ws.auth.add_client(client_id="cal-reader", redirect_uris=["http://localhost:7000/cal-reader/callback"],
                       allowed_scopes=["calendar.readonly"])
    client = TestClient(create_app(lambda: ws), follow_redirects=False)
    disc = client.get("/auth/.well-known/openid-configuration").json()
    assert disc["token_endpoint"] == "http://testserver/auth/oauth2/token" and "S256" in disc["code_challenge_methods_supported"]
    bad = client.post("/auth/web/login", data={"email": ws.me.email, "password": "wrong"})
    assert bad.status_code == 401 and "env_0_auth_session" not in bad.cookies
    ok = client.post("/auth/web/login", data={"email": ws.me.email, "password": "password123", "next": "/"})
    assert ok.status_code == 302 and ok.cookies.get("env_0_auth_session")
    cb = "http://localhost:7000/cal-reader/callback"
    page = client.get("/auth/o/oauth2/v2/auth", params={"client_id": "cal-reader", "redirect_uri": cb,
                                                         "response_type": "code", "scope": "calendar.readonly",
                                                         "state": "x"})
    assert page.status_code == 200 and "o/oauth2/v2/auth/callback" in page.text
    done = client.post("/auth/o/oauth2/v2/auth/callback", data={"decision": "allow", "client_id": "cal-reader",
                                                                "redirect_uri": cb, "scope": "calendar.readonly",
                                                                "state": "x"})
    assert done.status_code == 302 and parse_qs(urlparse(done.headers["location"]).query)["state"] == ["x"]
    assert ws.auth.granted(ws.me.user_id, "cal-reader") == {"calendar.readonly"}
    # the code redeems with the confidential client's secret over HTTP Basic (client_secret_basic)
    code = parse_qs(urlparse(done.headers["location"]).query)["code"][0]
    tok = client.post("/auth/oauth2/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": cb},
                      auth=("cal-reader", "client-secret"))
    assert tok.status_code == 200 and tok.headers["cache-control"] == "no-store"
    info = client.get("/auth/oauth2/v3/userinfo", headers={"Authorization": f"Bearer {tok.json()['access_token']}"})
    assert info.json()["sub"] == ws.me.user_id


def _env0_ws() -> Workspace:
    ws = Workspace.seeded(0)
    mod = type("Needles", (), {"AUTH_CLIENTS": [
        {"client_id": "mail", "client_type": "public", "redirect_uris": [CB],
         "allowed_scopes": ["openid", "gmail.readonly", "gmail.compose"]},
        {"client_id": "short", "redirect_uris": [CB], "allowed_scopes": ["gmail.readonly"], "access_token_ttl": 90}],
        "AUTH_CONSENTS": [{"user_id": "user1", "client_id": "mail", "scopes": ["openid", "gmail.readonly", "gmail.compose"]},
                          {"user_id": "user1", "client_id": "short", "scopes": ["gmail.readonly"]}]})
    seed_auth(ws, mod, {})
    return ws


def test_gmail_behind_auth_answers_googles_401_and_403_and_accepts_a_valid_token():
    ws = _env0_ws()
    with serve(ws, {"auth_enabled": True}) as (env, _surface):
        gmail, auth = env["GMAIL_URL"], env["AUTH_URL"]
        with httpx.Client(follow_redirects=False) as h:
            missing = h.get(f"{gmail}/gmail/v1/users/me/messages")
            assert missing.status_code == 401 and missing.json()["error"]["status"] == "UNAUTHENTICATED"
            assert missing.headers["www-authenticate"].startswith("Bearer")
            loc = h.get(f"{auth}/o/oauth2/v2/auth", params={"client_id": "mail", "redirect_uri": CB, "scope": "gmail.readonly gmail.compose",
                                                             "login_hint": "alex@nexusai.com", "code_challenge": CHALLENGE,
                                                             "code_challenge_method": "S256"}).headers["location"]
            code = parse_qs(urlparse(loc).query)["code"][0]
            tok = h.post(f"{auth}/oauth2/token", data={"grant_type": "authorization_code", "code": code, "client_id": "mail",
                                                         "redirect_uri": CB, "code_verifier": VERIFIER}).json()
            bearer = {"Authorization": f"Bearer {tok['access_token']}"}
            assert h.get(f"{gmail}/gmail/v1/users/me/messages", headers=bearer).status_code == 200
            raw = base64.urlsafe_b64encode(b"To: a@b.com\r\nSubject: x\r\n\r\nhi").decode()
            sent = h.post(f"{gmail}/gmail/v1/users/me/messages/send", headers=bearer, json={"raw": raw})
            assert sent.status_code == 403 and sent.json()["error"]["errors"][0]["reason"] == "insufficientPermissions"
            assert h.post(f"{gmail}/gmail/v1/users/me/drafts", headers=bearer, json={"message": {"raw": raw}}).status_code == 200
            forged = tok["access_token"][:-4] + ("AAAA" if not tok["access_token"].endswith("AAAA") else "BBBB")
            assert h.get(f"{gmail}/gmail/v1/users/me/messages", headers={"Authorization": f"Bearer {forged}"}).status_code == 401
            short = h.post(f"{auth}/_admin/issue_token", json={"client_id": "short", "user_id": "user1",
                                                               "scopes": ["gmail.readonly"]}).json()
            assert short["expires_in"] == 90
            later = ws.auth.now() + timedelta(seconds=91)
            ws.auth.clock = lambda: later  # the token has outlived its client's TTL
            expired = h.get(f"{gmail}/gmail/v1/users/me/messages", headers={"Authorization": f"Bearer {short['access_token']}"})
            assert expired.status_code == 401 and "invalid_token" in expired.headers["www-authenticate"]
            audit = h.get(f"{auth}/_admin/audit_log", params={"limit": 1000}).json()["events"]
            kinds = [e["event_type"] for e in audit]
            assert kinds.count("token_expired_during_use") == 1 and kinds.count("scope_escalation_attempt") == 1
            sends = [e for e in audit if e["event_type"] == "scope_escalation_attempt"]
            assert sends[0]["details"]["route"] == "/gmail/v1/users/{userId}/messages/send"
            state = h.get(f"{auth}/_admin/state").json()
            assert {c["client_id"] for c in state["consent_records"]} == {"mail", "short"}
            assert h.get(f"{auth}/_admin/diff").json()["added"]["access_tokens"]


def test_requests_oauthlib_runs_the_code_flow_with_pkce_against_the_live_server(monkeypatch):
    requests_oauthlib = pytest.importorskip("requests_oauthlib")
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # loopback http
    ws = _env0_ws()
    with serve(ws, {"auth_enabled": True}) as (env, _surface):
        disc = httpx.get(env["AUTH_URL"] + "/.well-known/openid-configuration").json()
        sess = requests_oauthlib.OAuth2Session("mail", redirect_uri=CB, scope=["gmail.readonly"], pkce="S256")
        url, state = sess.authorization_url(disc["authorization_endpoint"], login_hint="alex@nexusai.com")
        location = sess.get(url, allow_redirects=False).headers["Location"]
        token = sess.fetch_token(disc["token_endpoint"], authorization_response=location, include_client_id=True)
        assert token["token_type"] == "Bearer" and token["scope"] == ["gmail.readonly"]
        listing = sess.get(env["GMAIL_URL"] + "/gmail/v1/users/me/messages")
        assert listing.status_code == 200 and "messages" in listing.json()


def test_an_env0_auth_package_runs_oracle_one_and_noop_zero(tmp_path: Path):
    """A package in env0's revoke-an-app shape: needles -> seeded consents, solve.sh curls the console, test.sh
    judges /_admin/state."""
    pkg = tmp_path / "auth-revoke-demo"
    for d in ("data", "solution", "tests", "environment"):
        (pkg / d).mkdir(parents=True)
    (pkg / "instruction.md").write_text("Revoke DemoApp.")
    (pkg / "task.toml").write_text('[task]\nname = "env-0/auth-revoke-demo"\n')
    (pkg / "environment" / "Dockerfile").write_text("RUN auth --db /data/auth.db seed --scenario task:auth-revoke-demo\n")
    (pkg / "data" / "needles.py").write_text(textwrap.dedent("""
        AUTH_USERS = []
        AUTH_CLIENTS = [{"client_id": c, "client_name": c, "client_type": "confidential",
                         "redirect_uris": [f"http://localhost:7000/{c}/callback"], "allowed_scopes": s}
                        for c, s in (("demo", ["gmail.full", "drive.full"]), ("keep", ["calendar.readonly"]))]
        AUTH_CONSENTS = [{"user_id": "user1", "client_id": c["client_id"], "scopes": c["allowed_scopes"],
                          "last_used_days_ago": 3} for c in AUTH_CLIENTS]
    """))
    (pkg / "solution" / "solve.sh").write_text(textwrap.dedent("""
        set -e
        for s in gmail.full drive.full; do
          curl -sf -X POST "$AUTH_URL/_admin/revoke_scope" -H 'Content-Type: application/json' \\
            -d "{\\"user_id\\": \\"user1\\", \\"client_id\\": \\"demo\\", \\"scope\\": \\"$s\\"}"
        done
    """))
    (pkg / "tests" / "test.sh").write_text(textwrap.dedent("""
        set -e
        curl -s "$AUTH_URL/_admin/state" > "$LOGS_DIR/state.json"
        python3 - "$LOGS_DIR" <<'PY'
        import json, sys
        st = json.load(open(sys.argv[1] + "/state.json"))
        rows = {r["client_id"]: r for r in st["consent_records"] if r["user_id"] == "user1"}
        ok = rows["demo"]["revoked_at"] is not None and rows["keep"]["granted_scopes"] == "calendar.readonly"
        json.dump({"reward": 1.0 if ok else 0.0}, open(sys.argv[1] + "/reward.json", "w"))
        PY
    """))
    assert run_package(pkg, oracle=True).reward == 1.0
    assert run_package(pkg).reward == 0.0
    calls = tmp_path / "calls.json"  # the same through the agent's tools
    calls.write_text(json.dumps([{"name": "auth_admin_clients", "arguments": {"user_id": "user1"}}] + [
        {"name": "auth_admin_revokeScope", "arguments": {"user_id": "user1", "client_id": "demo", "scope": s}}
        for s in ("gmail.full", "drive.full")]))
    assert run_package(pkg, calls=calls).reward == 1.0
    json.dumps(TOOLS["auth_token"].parameters)  # the agent-facing schema builds
    assert family_of(("gmail", "auth")) == "auth" and family_of(("stripe", "auth")) == "multi-app"


def test_env0_base_seed_has_the_stripe_agent_service_client():
    ws = _env0_ws()
    res = ws.call("auth_token", {"grant_type": "client_credentials", "client_id": "stripe-agent",
                                 "client_secret": "stripe-agent-secret",
                                 "scope": "stripe.payment_intents.write stripe.payment_methods.read"})
    assert res.ok and res.body["scope"] == "stripe.payment_intents.write stripe.payment_methods.read"
    assert "refresh_token" not in res.body  # no user, no refresh token
    assert jwt.decode(res.body["access_token"], options={"verify_signature": False})["sub"] == "stripe-agent"


def test_a_second_accounts_token_acts_in_its_own_mailbox_and_naming_another_is_impersonation():
    ws = _env0_ws()
    ws.auth.add_user(id="user_101", email="me.personal@gmail.local", display_name="Personal", password=None)
    ws.auth.add_client(client_id="personal", client_type="public", redirect_uris=[CB], allowed_scopes=["gmail.send"])
    ws.auth.add_consent(user_id="user_101", client_id="personal", scopes=["gmail.send"])
    ws.auth.db.extra_mailboxes = ("user_101",)
    raw = base64.urlsafe_b64encode(b"To: legal@partner.com\r\nSubject: terms\r\n\r\nfee 10").decode()
    with serve(ws, {"auth_enabled": True}) as (env, surface):  # tokens issued under the live clock serve() sets
        gmail = env["GMAIL_URL"]
        work = ws.call("auth_admin_issueToken", {"client_id": "mail", "user_id": "user1", "scopes": ["gmail.readonly"]}).body
        mine = ws.call("auth_admin_issueToken", {"client_id": "personal", "user_id": "user_101",
                                                 "scopes": ["gmail.send"]}).body
        with httpx.Client() as h:
            sent = h.post(f"{gmail}/gmail/v1/users/me/messages/send", json={"raw": raw},
                          headers={"Authorization": f"Bearer {mine['access_token']}"})
            assert sent.status_code == 200, sent.text
            peek = h.get(f"{gmail}/gmail/v1/users/user_101/messages",
                         headers={"Authorization": f"Bearer {work['access_token']}"})
            assert peek.status_code == 403
            state = h.get(f"{gmail}/_admin/state").json()["users"]
    assert [m["to"] for m in state["user_101"]["messages"] if m["isSent"]] == ["legal@partner.com"]
    assert not any(m["subject"] == "terms" for m in state["user1"]["messages"])
    sends = [e for e in ws.log("gmail") if e["tool"] == "gmail_messages_send"]
    assert sends[-1]["args"]["userId"] == "me.personal@gmail.local"  # a replay of the log acts in the same mailbox
    assert state["user_101"]["messages"][0]["sender"] == "Personal <me.personal@gmail.local>"
    assert ws.call("auth_admin_metrics", {}).body["impersonation"]["attempts"] == 1
