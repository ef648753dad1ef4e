"""The destructive-side-effect gate (tasks/gates.py) sees a removed comment and a removed forwarding address."""

from __future__ import annotations

from env0_posttrain.tasks import build_workspace
from env0_posttrain.workspace import call_tool
from env0_posttrain_tests.support.template_runs import first_task


def test_removing_my_comment_or_settings_is_destructive():
    from env0_posttrain.tasks.gates import removals

    start = build_workspace(first_task("mail_vacation_responder"))
    f = start.drive.add_file(name="Notes", content="x")
    c = start.drive.add_comment(f.id, "mine")
    start.gmail.add_forwarding_address(start.directory[2].email)
    start.gmail.add_filter({"from": "a@b.c"}, {"addLabelIds": ["STARRED"]})
    end = start.fork()
    for name, args in [("drive_comments_delete", {"fileId": f.id, "commentId": c.id}),
                       ("gmail_settings_forwardingAddresses_delete", {"forwardingEmail": start.directory[2].email})]:
        assert call_tool(end, name, args)["ok"]
    assert removals(start, end) == {f"comment:{c.id}", f"forward:{start.directory[2].email}"}
