"""The Drive comment template (families/docs_comments.py): resolving needs the reply and leaves the other comment,
which the agent may not delete."""

from __future__ import annotations

from env0_posttrain.tasks import build_workspace
from env0_posttrain.workspace import call_tool
from env0_posttrain_tests.support.template_runs import first_task, run_calls


def test_comment_resolution_needs_the_reply_and_leaves_the_other_comment():
    task = first_task("docs_resolve_comment_with_reply")
    p, ws = task.recipe.items, build_workspace(task)
    fid = next(f.id for f in ws.drive.db.files.values() if f.name == p["file"])
    ids = {c.content: c.id for c in ws.drive.db.comments.values() if c.fileId == fid}
    target, other = ids[p["comment"]], ids[p["other_comment"]]

    def reply(cid, body):
        return "drive_replies_create", {"fileId": fid, "commentId": cid, "fields": "id", "body": body}

    assert run_calls(task, [reply(target, {"content": p["reply"], "action": "resolve"})]).reward == 1.0
    assert run_calls(task, [reply(target, {"content": p["reply"]}), reply(target, {"action": "resolve"})]).reward == 1.0
    assert 0 < run_calls(task, [reply(target, {"action": "resolve"})]).reward < 1.0  # resolved without the answer
    both = run_calls(task, [reply(target, {"content": p["reply"], "action": "resolve"}), reply(other, {"action": "resolve"})])
    assert both.reward == 0.5
    assert call_tool(ws, "drive_comments_delete", {"fileId": fid, "commentId": other})["error"]["error"]["code"] == 403
