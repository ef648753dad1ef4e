"""HTTP fuzzing of whole sessions: random tool calls sent as the real HTTP requests they stand for, one
after another on one server, never get a 5xx, and `POST /_admin/restore` brings back the exact start.

workspace/test_fuzz.py sends one raw request at a time and restores in process; this drives the
admin surface the way a remote harness does (snapshot, many writes, restore, all over HTTP).
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env0_posttrain.workspace import TOOLS, Workspace
from env0_posttrain.workspace.http_app import create_app
from env0_posttrain_tests.workspace.test_fuzz import tool_calls

CLIENT = TestClient(create_app(lambda: Workspace.seeded(0)))


def _scalar(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def as_request(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The HTTP request a tool call stands for: path parameters in the path; Google's other arguments in
    the query and `body` as JSON; Slack reads as GET with a query, writes as POST with a JSON body."""
    spec = TOOLS[name]
    path = spec.path
    for p in spec.path_params:
        path = path.replace("{+" + p + "}", quote(_scalar(args.get(p, "me")), safe=""))
        path = path.replace("{" + p + "}", quote(_scalar(args.get(p, "me")), safe=""))
    rest = {k: v for k, v in args.items() if k not in spec.path_params}
    if spec.service == "slack":
        if spec.writes:
            return {"method": "POST", "url": "/" + path, "json": rest}
        rest, body = rest, None
    else:
        body = rest.pop("body", None)
    params = [(k, _scalar(x)) for k, v in rest.items() for x in (v if isinstance(v, list) else [v])
              if not isinstance(x, (dict, list)) and x is not None]
    req: dict[str, Any] = {"method": spec.http_method if spec.service != "slack" else "GET", "url": "/" + path,
                           "params": params}
    if body is not None:
        req["json"] = body
    return req


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tool_calls(), min_size=1, max_size=10))
def test_a_session_of_random_requests_never_5xxs_and_an_http_restore_returns_the_exact_start(calls):
    h0 = CLIENT.post("/_admin/snapshot", json={"name": "start"}).json()["state_hash"]
    statuses = []
    for name, args in calls:
        r = CLIENT.request(**as_request(name, args))
        assert r.status_code < 500, (name, args, r.status_code, r.text[:300])
        statuses.append(r.status_code)
    restored = CLIENT.post("/_admin/restore", json={"name": "start"}).json()
    assert restored["state_hash"] == h0
    assert CLIENT.get("/_admin/state_hash").json()["state_hash"] == h0
    assert CLIENT.get("/_admin/diff").status_code == 200


def test_the_translation_reaches_real_routes_and_writes():
    """Guards the test above against fuzzing only 404s: a valid call sent this way succeeds and changes state."""
    ws = CLIENT.app.state.ws
    h0 = CLIENT.post("/_admin/snapshot", json={"name": "t"}).json()["state_hash"]
    to = ws.directory[3].email
    raw = base64.urlsafe_b64encode(f"To: {to}\r\nSubject: hi\r\n\r\nhello".encode()).decode()
    r = CLIENT.request(**as_request("gmail_messages_send", {"userId": "me", "body": {"raw": raw}}))
    assert r.status_code == 200, r.text
    event = {"summary": "x", "start": {"dateTime": "2026-03-12T10:00:00Z"}, "end": {"dateTime": "2026-03-12T11:00:00Z"}}
    r = CLIENT.request(**as_request("calendar_events_insert", {"calendarId": "primary", "body": event}))
    assert r.status_code == 200, r.text
    channel = next(iter(ws.slack.db.channels))
    r = CLIENT.request(**as_request("slack_chat_postMessage", {"channel": channel, "text": "hi"}))
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    assert CLIENT.get("/_admin/state_hash").json()["state_hash"] != h0
    assert CLIENT.post("/_admin/restore", json={"name": "t"}).json()["state_hash"] == h0
