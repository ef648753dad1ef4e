"""What an env0 port does beyond its API comes from its service's env0 face and dialect, not from service names in
the serving code: the issuer port, the routes that stand for no tool, and how a request is logged."""

from __future__ import annotations

from env0_posttrain.tasks.env0.serve.auth_surface import _method
from env0_posttrain.tasks.env0.serve.server import Env0Surface, log_entry
from env0_posttrain.tasks.env0.services import FACES, issuer_prefix
from env0_posttrain.workspace import Workspace
from env0_posttrain.workspace.api_routes import targets
from env0_posttrain.workspace.tools import TOOLS


def test_one_port_is_the_oidc_issuer_and_it_is_auths():
    assert [svc for svc, face in FACES.items() if face.issuer] == ["auth"]
    assert issuer_prefix() == "auth"


def test_every_route_standing_for_no_tool_is_claimed_by_one_port():
    bare = [name for name, target in targets().items() if target.spec is None]
    assert bare  # Slack's upload step 2
    for name in bare:
        assert [svc for svc, face in FACES.items() if name in face.own_routes] == ["slack"]


def test_slacks_upload_bytes_are_a_slack_request_without_a_tool():
    scope = {"method": "POST", "query_string": b"", "headers": []}
    assert _method("slack", scope, "/upload/v1/F123", b"bytes") == ("slack", None, {"file_id": "F123"})


def test_a_tool_call_is_logged_as_its_familys_http_request():
    _, read = log_entry(TOOLS["slack_conversations_history"], {"channel": "C1", "limit": 5}, 200)
    assert (read["method"], read["path"], read["request_body"]) == (
        "GET", "/api/conversations.history?channel=C1&limit=5", None)
    _, write = log_entry(TOOLS["slack_chat_postMessage"], {"channel": "C1", "text": "hi"}, 200)
    assert (write["method"], write["path"], write["request_body"]) == (
        "POST", "/api/chat.postMessage", {"channel": "C1", "text": "hi"})
    prefix, send = log_entry(TOOLS["gmail_messages_send"], {"userId": "me", "body": {"raw": "eA"}}, 200)
    assert (prefix, send["method"], send["path"], send["request_body"]) == (
        "gmail", "POST", "/gmail/v1/users/me/messages/send", {"raw": "eA"})


def test_a_body_that_is_not_json_is_logged_as_the_port_reads_it():
    surface = Env0Surface(Workspace.seeded(0))
    surface.api("stripe", "POST", "/v1/customers", b"", b"email=a%40example.com&name=", "application/x-www-form-urlencoded")
    assert surface.log["stripe"][-1]["request_body"] == {"email": "a@example.com", "name": ""}
    surface.api("gmail", "POST", "/gmail/v1/users/me/messages/send", b"", b"not json", "text/plain")
    assert surface.log["gmail"][-1]["request_body"] == {"_raw": "not json"}
