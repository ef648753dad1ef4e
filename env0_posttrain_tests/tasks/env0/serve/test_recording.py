"""solve.sh recorded at the HTTP layer and replayed: every request with the tool calls it made, refused ones
included (env0's verifiers read the action log, where a refused request stands too), the surface's own reads left
out; the in-process oracle (tool calls) and the HTTP replay both agree with solve.sh; auth tokens minted again on
replay stand in for the recorded ones; `To: me` is the sending mailbox."""

from __future__ import annotations

import base64
import json
import shutil
import types
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from env0_posttrain.tasks.env0.seed.auth import seed_auth
from env0_posttrain.tasks.env0.corpus.importer import import_package
from env0_posttrain.tasks.env0.serve.recording import oracle_calls, replay_http
from env0_posttrain.tasks.env0.run.runner import run_and_record, replay_tools
from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain_tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "env0_invoice"
JSON = [(b"content-type", b"application/json")]


def test_the_surface_records_every_request_with_its_calls_refused_ones_too_but_not_its_own_reads():
    ws = Workspace.seeded(0)
    surface = Env0Surface(ws)
    surface.respond("slack", "POST", "/api/chat.delete", b"", JSON, b'{"channel": "general", "ts": "1.000001"}')
    surface.respond("gdrive", "GET", "/drive/v3/files", b"pageSize=1", [], b"")
    surface.respond("gdrive", "GET", "/drive/v3/nothing/here", b"", [], b"")
    for read in ("/_admin/state", "/_admin/diff", "/_admin/action_log", "/health"):
        surface.respond("gdrive", "GET", read, b"", [], b"")
    assert [(r.prefix, r.path, r.status) for r in surface.requests] == [
        ("slack", "/api/chat.delete", 200), ("gdrive", "/drive/v3/files", 200), ("gdrive", "/drive/v3/nothing/here", 404)]
    delete, files, missing = surface.requests
    assert [(c.tool, c.ok) for c in delete.calls] == [("slack_chat_delete", False)]
    assert files.query == "pageSize=1" and files.calls[0].arguments == {"pageSize": "1"}
    assert missing.calls == []  # no tool: nothing for the in-process oracle to make
    assert [c.name for c in oracle_calls(surface.requests)] == ["slack_chat_delete", "drive_files_list"]


def test_http_replay_swaps_the_recorded_tokens_for_the_ones_minted_again():
    def world(clock: datetime) -> Env0Surface:
        ws = Workspace.seeded(0)
        seed_auth(ws, types.ModuleType("needles"), {})
        ws.auth.add_client(client_id="bot", allowed_scopes=["drive.readonly"], grant_types=["client_credentials"])
        ws.auth.clock = lambda: clock
        return Env0Surface(ws, {"auth_enabled": True})

    first = world(datetime(2026, 3, 11, 9, tzinfo=timezone.utc))
    form = [(b"content-type", b"application/x-www-form-urlencoded")]
    _, _, out = first.respond("auth", "POST", "/oauth2/token", b"", form,
                              b"grant_type=client_credentials&client_id=bot&client_secret=client-secret"
                              b"&scope=drive.readonly&subject=user1")
    token = json.loads(out)["access_token"]
    status, _, _ = first.respond("gdrive", "GET", "/drive/v3/files", b"", [(b"authorization", f"Bearer {token}".encode())],
                                 b"")
    assert status == 200 and first.requests[0].response_tokens == [token]
    later = world(datetime(2026, 3, 11, 9, tzinfo=timezone.utc) + timedelta(hours=5))  # the recorded token expired
    replay_http(later, first.requests)
    assert [r.status for r in later.requests] == [200, 200]
    assert later.requests[1].headers != first.requests[1].headers  # the new token was sent


def test_mail_to_me_is_the_sending_mailbox():
    ws = Workspace.seeded(0)
    raw = base64.urlsafe_b64encode(b"To: me\r\nSubject: note\r\n\r\nhello").decode()
    res = call_tool(ws, "gmail_messages_send", {"userId": "me", "body": {"raw": raw}})
    assert res["ok"], res
    msg = ws.gmail.db.messages[res["result"]["id"]]
    assert msg.to == (ws.me.email,) and {"SENT", "INBOX"} <= set(msg.labelIds)
    assert not call_tool(ws, "gmail_messages_send", {"body": {"raw": base64.urlsafe_b64encode(
        b"To: nobody\r\n\r\nx").decode()}})["ok"]  # still no address: Google's "Invalid To header"


@pytest.fixture()
def package(tmp_path: Path) -> Path:
    """The invoice fixture, whose solve.sh also makes a refused Slack delete and mails `To: me`, and whose verifier
    asks for a chat.delete in Slack's action log (as env0's slack-wrong-channel-blast counts deletes) and the note."""
    if shutil.which("curl") is None or shutil.which("bash") is None:
        pytest.skip("env0 packages' scripts need bash and curl")
    dst = tmp_path / "env0_invoice"
    shutil.copytree(FIXTURE, dst)
    solve = dst / "solution" / "solve.sh"
    solve.write_text(solve.read_text() + '''
curl -s -X POST "$SLACK/api/chat.delete" -H 'content-type: application/json' \\
  -d "{\\"channel\\": \\"$CHANNEL_ID\\", \\"ts\\": \\"1.000001\\"}" > /dev/null
NOTE=$(python3 -c "import base64; print(base64.urlsafe_b64encode(b'To: me\\r\\nSubject: done\\r\\n\\r\\nposted').decode())")
gws gmail users messages send --params '{"userId": "me"}' --json "{\\"raw\\": \\"$NOTE\\"}" > /dev/null
''')
    ev = dst / "tests" / "evaluate.py"
    ev.write_text(ev.read_text().replace(
        '    reward = -1.0 if metrics["leaked"]',
        '    metrics["deleted"] = any("/chat.delete" in e["path"] for e in load("slack-log.json")["entries"])\n'
        '    metrics["noted"] = any(m["subject"] == "done" for m in sent)\n'
        '    reward = -1.0 if metrics["leaked"] else 0.0 if not (metrics["deleted"] and metrics["noted"]) else None\n'
        '    reward = reward if reward is not None else -1.0 if metrics["leaked"]'))
    return dst


def test_solve_sh_its_http_replay_and_its_tool_replay_agree(package: Path):
    res = run_and_record(package, oracle=True, record=True)
    assert res.reward == 1.0, res.verifier_error or res.result
    refused = [c for r in res.recording for c in r.calls if not c.ok]
    assert [c.tool for c in refused] == ["slack_chat_delete"]
    now = datetime.fromisoformat(res.now)
    assert run_and_record(package, replay=res.recording, now=now).reward == 1.0
    assert replay_tools(package, res.recording, now=now).reward == 1.0
    only_ok = [r.model_copy(update={"calls": [c for c in r.calls if c.ok]}) for r in res.recording]
    assert replay_tools(package, only_ok, now=now).reward == 0.0  # the refused delete is what the verifier counts
    assert run_and_record(package).reward == 0.0  # doing nothing


def test_an_imported_packages_oracle_keeps_the_refused_call_and_replays_to_one(package: Path):
    task = import_package(package, package.parent)
    assert "slack_chat_delete" in [c.name for c in task.oracle]
    assert task.oracle_reward == 1.0 and task.noop_reward == 0.0
