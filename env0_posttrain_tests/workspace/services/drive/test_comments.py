"""comments.list / create as env0 packages' oracles call them: `fields` is required, comments list in order."""

from __future__ import annotations

from datetime import timedelta

import pytest

from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain_tests.support.workspace import ok


@pytest.fixture()
def ws():
    return Workspace.seeded(7)


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
