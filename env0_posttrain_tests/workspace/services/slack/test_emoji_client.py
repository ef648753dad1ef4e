"""slack_sdk's WebClient against the live app: reactions.add takes Slack's standard emoji names (aliases such as
`+1` and `thumbsup`, CLDR names, skin tones) and answers `invalid_name` for any other (the workspace has no custom
emoji), changing nothing."""

from __future__ import annotations

import ssl

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from env0_posttrain_tests.support.live_workspace import reseeded_workspace_fixture, tls_server_fixture

pytestmark = pytest.mark.filterwarnings("ignore")
server = tls_server_fixture()
ws = reseeded_workspace_fixture()


@pytest.fixture()
def client(server, ws):
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return WebClient(token="xoxp-local", base_url=f"{server[0]}/api/", ssl=ctx)


def test_reactions_add_knows_the_standard_emoji_only(client, ws):
    cid = next(c["id"] for c in client.conversations_list()["channels"] if c["name"] == "general")
    ts = client.chat_postMessage(channel=cid, text="Shipped")["ts"]
    for name in ("+1", ":tada:", "white_check_mark", "thumbsup::skin-tone-3", "party_popper"):
        assert client.reactions_add(channel=cid, timestamp=ts, name=name)["ok"]
    h0 = ws.state_hash()
    for name in ("not_an_emoji_at_all", "thumbsup::skin-tone-9", "TADA!"):
        with pytest.raises(SlackApiError) as e:
            client.reactions_add(channel=cid, timestamp=ts, name=name)
        assert e.value.response["error"] == "invalid_name"
    assert ws.state_hash() == h0
    got = client.reactions_get(channel=cid, timestamp=ts)["message"]["reactions"]
    assert [r["name"] for r in got] == ["+1", "tada", "white_check_mark", "thumbsup::skin-tone-3", "party_popper"]
