"""users.messages.batchModify, which env0 packages' oracles call: every message relabelled, or none."""

from __future__ import annotations


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
