"""conversations.members / conversations.open and search.messages, as env0 packages' oracles call them."""

from __future__ import annotations


import pytest

from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain_tests.support.workspace import ok


@pytest.fixture()
def ws():
    return Workspace.seeded(7)


def test_slack_members_open_and_search(ws):
    general = ws.slack.channel_by_name("general")
    members = ok(ws, "slack_conversations_members", {"channel": general.id, "limit": 2})
    assert members["members"] == list(general.members[:2]) and members["response_metadata"]["next_cursor"]
    other = ws.directory[5].slack_user_id
    first = ok(ws, "slack_conversations_open", {"users": other})
    assert first["channel"]["id"].startswith("D") and "already_open" not in first
    assert ok(ws, "slack_conversations_open", {"users": other})["already_open"] is True
    assert call_tool(ws, "slack_conversations_open", {"users": "UNOBODY"})["error"]["error"] == "user_not_found"
    ws.slack.add_message("general", user=other, text="The Zephyr launch slips a week")
    hits = ok(ws, "slack_search_messages", {"query": "zephyr LAUNCH in:#general"})["messages"]
    assert hits["total"] == 1 and hits["matches"][0]["channel"]["name"] == "general"
    assert ok(ws, "slack_search_messages", {"query": "zephyr in:#random"})["messages"]["total"] == 0
    secret = ws.slack.add_channel("hidden", members=[other], private=True)
    ws.slack.add_message(secret.id, user=other, text="zephyr secret")
    assert ok(ws, "slack_search_messages", {"query": "zephyr"})["messages"]["total"] == 1  # private: not a member
