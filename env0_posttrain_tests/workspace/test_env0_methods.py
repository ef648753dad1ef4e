"""API methods env0 packages' oracles call that the workspace lacked: gmail users.messages.batchModify,
drive comments.list / create, slack conversations.members / conversations.open / search.messages."""

from __future__ import annotations

from datetime import timedelta

import pytest

from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain_tests.support.workspace import ok


@pytest.fixture()
def ws():
    return Workspace.seeded(7)


def test_gmail_batch_modify_relabels_every_message_or_none(ws):
    label = ok(ws, "gmail_labels_create", {"body": {"name": "Batch"}})["id"]
    ids = [m.id for m in ws.gmail.mailbox()[:3]]
    assert ok(ws, "gmail_messages_batchModify", {"body": {"ids": ids, "addLabelIds": [label],
                                                          "removeLabelIds": ["UNREAD"]}}) == {}  # 204: no body
    for mid in ids:
        labels = ws.gmail.db.messages[mid].labelIds
        assert label in labels and "UNREAD" not in labels
    before = dict(ws.gmail.db.messages)
    res = call_tool(ws, "gmail_messages_batchModify", {"body": {"ids": [ids[0], "nope"], "removeLabelIds": [label]}})
    assert not res["ok"] and res["error"]["error"]["code"] == 404
    assert ws.gmail.db.messages == before  # the good id was not relabelled either
    assert not call_tool(ws, "gmail_messages_batchModify", {"body": {"ids": "x"}})["ok"]


def test_drive_comments_need_fields_and_list_in_order(ws):
    f = ws.drive.add_file(name="Spec", content="text")
    res = call_tool(ws, "drive_comments_list", {"fileId": f.id})
    assert not res["ok"] and "fields" in res["error"]["error"]["message"]
    made = ok(ws, "drive_comments_create", {"fileId": f.id, "fields": "id,content,quotedFileContent",
                                           "body": {"content": "Out of date", "quotedFileContent": {"value": "1000"}}})
    assert made["content"] == "Out of date" and made["quotedFileContent"]["value"] == "1000"
    ws.drive.add_comment(f.id, "older", author=ws.directory[3].email, when=ws.now - timedelta(days=1))
    listed = ok(ws, "drive_comments_list", {"fileId": f.id, "fields": "comments(id,content,author)"})["comments"]
    assert [c["content"] for c in listed] == ["older", "Out of date"]  # oldest first
    assert set(listed[0]) == {"id", "content", "author"}
    assert not call_tool(ws, "drive_comments_create", {"fileId": f.id, "fields": "id", "body": {"content": " "}})["ok"]


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
