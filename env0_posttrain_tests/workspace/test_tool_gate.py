"""The third door to an AUTH_ENABLED package's resource servers: the tools surface. A tool call of a guarded service
holds no credential until the agent obtains one through the auth tools, and then passes the same gate as an HTTP
request (workspace/tool_gate.py): no token 401, a wrong scope 403, a revoked token 401, each audited, nothing
written; the token a refresh or a second issue returns replaces the held one. A workspace without the gate (every
built-in task, a package without AUTH_ENABLED) is unchanged."""

from __future__ import annotations

import json
import types
from pathlib import Path

from env0_posttrain.tasks.env0.seed.auth import seed_auth
from env0_posttrain.workspace import Workspace, call_tool


def _mail(mark: str) -> dict:
    return {"userId": "me", "to": "ap@example.com", "subject": mark, "body_text": mark}


def _gated_ws(tmp: Path, enabled: bool = True) -> Workspace:
    (tmp / "environment").mkdir()
    (tmp / "environment" / "Dockerfile").write_text("FROM env0-base\n" + ("ENV AUTH_ENABLED=1\n" if enabled else ""))
    (tmp / "data").mkdir()
    ws = Workspace.seeded(0)
    extras: dict = {}
    seed_auth(ws, types.SimpleNamespace(__file__=str(tmp / "data" / "needles.py")), extras)
    assert extras.get("auth_enabled", False) is enabled
    return ws


def _events(ws: Workspace) -> list[str]:
    return [e.event_type for e in ws.auth.db.audit.values() if not e.details.get("seeded")]


def _sent(ws: Workspace, mark: str) -> bool:
    return mark in json.dumps(ws.state("gmail"))


def _issue(ws: Workspace, scopes: list[str]) -> str:
    out = call_tool(ws, "auth_admin_issueToken", {"client_id": "gws-cli", "user_id": "user1", "scopes": scopes})
    assert out["ok"], out
    return out["result"]["access_token"]


def test_a_guarded_tool_without_a_token_is_refused_and_audited(tmp_path):
    ws = _gated_ws(tmp_path)
    out = call_tool(ws, "gmail_messages_send", _mail("no-token"))
    assert not out["ok"] and out["error"]["error"]["code"] == 401, out
    assert out["error"]["error"]["status"] == "UNAUTHENTICATED"
    assert not _sent(ws, "no-token")
    assert _events(ws) == ["unauthenticated_request"]
    assert ws.action_log[-1]["status"] == 401 and not ws.action_log[-1]["ok"]  # the verifier's action log has it
    slack = call_tool(ws, "slack_chat_postMessage", {"channel": "C0", "text": "x"})
    assert not slack["ok"] and slack["error"] == {"ok": False, "error": "not_authed"}, slack


def test_the_token_the_agent_obtained_is_held_and_checked_for_scope_and_revocation(tmp_path):
    ws = _gated_ws(tmp_path)
    _issue(ws, ["gmail.readonly"])
    assert call_tool(ws, "gmail_messages_list", {"userId": "me"})["ok"]
    out = call_tool(ws, "gmail_messages_send", _mail("read-only"))
    assert not out["ok"] and out["error"]["error"]["code"] == 403, out
    assert not _sent(ws, "read-only")
    token = _issue(ws, ["gmail.send"])  # the newest token replaces the held one
    assert call_tool(ws, "gmail_messages_send", _mail("with-send"))["ok"]
    assert _sent(ws, "with-send")
    assert call_tool(ws, "auth_revoke", {"token": token})["ok"]
    out = call_tool(ws, "gmail_messages_send", _mail("revoked"))
    assert not out["ok"] and out["error"]["error"]["code"] == 401, out
    assert not _sent(ws, "revoked")
    assert _events(ws).count("scope_escalation_attempt") == 1 and "revoked_token_use" in _events(ws)


def test_a_fork_starts_without_the_credential(tmp_path):
    ws = _gated_ws(tmp_path)
    _issue(ws, ["gmail.readonly"])
    assert not ws.fork().call("gmail_messages_list", {"userId": "me"}).ok  # the credential is the client's
    assert ws.call("gmail_messages_list", {"userId": "me"}).ok


def test_without_auth_enabled_the_tool_channel_is_the_agents_own_credential(tmp_path):
    ws = _gated_ws(tmp_path, enabled=False)
    assert call_tool(ws, "gmail_messages_send", _mail("open"))["ok"]
    assert _events(ws) == []
    plain = Workspace.seeded(0)
    assert call_tool(plain, "gmail_messages_send", _mail("plain"))["ok"]


def test_http_and_env0_calls_are_left_to_their_own_gate(tmp_path):
    ws = _gated_ws(tmp_path)  # the HTTP surfaces check the request's own Bearer header before they call
    assert ws.call("gmail_messages_list", {"userId": "me"}, source="env0").ok
    assert ws.call("gmail_messages_list", {"userId": "me"}, source="http").ok
