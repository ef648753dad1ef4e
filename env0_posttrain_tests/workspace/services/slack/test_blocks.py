"""Slack's Block Kit `blocks` through the official slack_sdk WebClient against the live app: stored by
chat.postMessage, chat.update and chat.scheduleMessage and returned by history and replies, checked as Slack checks
them (invalid_blocks_format, invalid_blocks with a json-pointer, 50 blocks, per-block text limits, msg_too_long,
no_text), and a body that holds too much to parse is refused before anything is built or stored."""

from __future__ import annotations

import json

import ssl

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from env0_posttrain.workspace.request_limits import MAX_ELEMENTS
from env0_posttrain_tests.support.live_workspace import reseeded_workspace_fixture, tls_server_fixture
from env0_posttrain_tests.workspace.services.slack.test_slack_sdk import general, refused

pytestmark = pytest.mark.filterwarnings("ignore")

server = tls_server_fixture()
ws = reseeded_workspace_fixture()


@pytest.fixture()
def client(server, ws):
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return WebClient(token="xoxp-local", base_url=f"{server[0]}/api/", ssl=ctx)

BLOCKS = [{"type": "header", "text": {"type": "plain_text", "text": "Release 4.2"}},
          {"type": "section", "text": {"type": "mrkdwn", "text": "*Shipped* today"},
           "fields": [{"type": "mrkdwn", "text": "*Owner*"}, {"type": "plain_text", "text": "Ana"}]},
          {"type": "divider"},
          {"type": "context", "elements": [{"type": "mrkdwn", "text": "from the release bot"}]}]


def history(client, channel: str) -> list[dict]:
    return client.conversations_history(channel=channel)["messages"]


def test_blocks_are_stored_and_returned_by_history_replies_and_update(client, ws):
    chan = general(client)
    sent = client.chat_postMessage(channel=chan, text="Release 4.2 shipped", blocks=BLOCKS)
    assert sent["message"]["blocks"] == BLOCKS
    assert next(m for m in history(client, chan) if m["ts"] == sent["ts"])["blocks"] == BLOCKS
    only = client.chat_postMessage(channel=chan, blocks=json.dumps(BLOCKS[2:]))  # a JSON string, no text: allowed
    assert only["message"]["blocks"] == BLOCKS[2:] and only["message"]["text"] == ""
    reply = client.chat_postMessage(channel=chan, thread_ts=sent["ts"], text="details", blocks=BLOCKS[1:2])
    replies = client.conversations_replies(channel=chan, ts=sent["ts"])["messages"]
    assert [m.get("blocks") for m in replies] == [BLOCKS, BLOCKS[1:2]] and replies[1]["ts"] == reply["ts"]

    new = [{"type": "section", "text": {"type": "plain_text", "text": "Rolled back"}}]
    assert client.chat_update(channel=chan, ts=sent["ts"], text="Rolled back", blocks=new)["message"]["blocks"] == new
    client.chat_update(channel=chan, ts=sent["ts"], text="Rolled back (edited)")  # blocks left out: kept
    edited = next(m for m in history(client, chan) if m["ts"] == sent["ts"])
    assert edited["blocks"] == new and edited["text"] == "Rolled back (edited)"
    client.chat_update(channel=chan, ts=sent["ts"], text="No blocks", blocks=[])  # an empty array removes them
    assert "blocks" not in next(m for m in history(client, chan) if m["ts"] == sent["ts"])
    stored = ws.slack.db.messages[f"{chan}/{only['ts']}"]
    assert list(stored.blocks) == BLOCKS[2:]

    later = int(ws.now.timestamp()) + 3600
    sid = client.chat_scheduleMessage(channel=chan, post_at=later, text="soon", blocks=BLOCKS[:1])["scheduled_message_id"]
    assert list(ws.slack.db.scheduled[sid].blocks) == BLOCKS[:1]


def _pointer(call) -> str:
    with pytest.raises(SlackApiError) as e:
        call()
    return e.value.response["response_metadata"]["messages"][0]


def test_blocks_and_text_are_checked_as_slack_checks_them(client, ws):
    chan = general(client)
    post = client.chat_postMessage
    refused(lambda: post(channel=chan, text="x", blocks='{"type": "divider"}'), "invalid_blocks_format", ws)
    refused(lambda: post(channel=chan, text="x", blocks="[{not json"), "invalid_blocks_format", ws)
    refused(lambda: post(channel=chan, text="x", blocks=[{"type": "marquee"}]), "invalid_blocks", ws)
    refused(lambda: post(channel=chan, text="x", blocks=[1]), "invalid_blocks", ws)
    refused(lambda: post(channel=chan, text="x", blocks=[{"type": "divider"}] * 51), "invalid_blocks", ws)
    assert post(channel=chan, text="x", blocks=[{"type": "divider"}] * 50)["ok"]
    long = [{"type": "section", "text": {"type": "mrkdwn", "text": "a" * 3001}}]
    refused(lambda: post(channel=chan, text="x", blocks=long), "invalid_blocks", ws)
    assert "[json-pointer:/blocks/0/text/text]" in _pointer(lambda: post(channel=chan, text="x", blocks=long))
    header = [{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}]  # a header is plain_text only
    assert "[json-pointer:/blocks/0/text]" in _pointer(lambda: post(channel=chan, text="x", blocks=header))
    refused(lambda: post(channel=chan, text="a" * 40001), "msg_too_long", ws)
    assert post(channel=chan, text="a" * 40000)["ok"]
    refused(lambda: post(channel=chan, text=" "), "no_text", ws)
    mine = post(channel=chan, text="mine")["ts"]
    refused(lambda: client.chat_update(channel=chan, ts=mine, text="x", blocks=[{"type": "x"}]), "invalid_blocks", ws)
    refused(lambda: client.chat_update(channel=chan, ts=mine, text="a" * 40001), "msg_too_long", ws)


def test_a_body_holding_too_much_to_parse_is_refused_before_it_is_built(server, ws):
    """A `blocks` of nested or flat empty arrays, over MAX_ELEMENTS values in under Slack's byte limit: as a JSON
    body Slack's invalid_json, as a form field invalid_blocks_format; nothing is stored and the app answers on."""
    base = server[0]
    chan = next(c.id for c in ws.slack.db.channels.values() if c.name == "general")
    h0 = ws.state_hash()
    flat = "[" + ",".join(["[]"] * (MAX_ELEMENTS + 1)) + "]"
    deep = "[" * 5000 + "]" * 5000
    with httpx.Client(verify=False, headers={"Authorization": "Bearer xoxp-local"}) as http:
        for blocks in (flat, deep):
            body = f'{{"channel": "{chan}", "text": "x", "blocks": {blocks}}}'
            answer = http.post(f"{base}/api/chat.postMessage", content=body,
                               headers={"content-type": "application/json"}).json()
            assert answer == {"ok": False, "error": "invalid_json"}
            answer = http.post(f"{base}/api/chat.postMessage", data={"channel": chan, "text": "x", "blocks": blocks}).json()
            assert answer["error"] == "invalid_blocks_format", answer
        assert ws.state_hash() == h0
        assert http.post(f"{base}/api/chat.postMessage", json={"channel": chan, "text": "still here"}).json()["ok"]
