"""Slack's newer state (files, scheduled messages, reminders, pins, profile and presence): seeding helpers,
snapshot / restore / diff, the action log, the verifier helpers, and the safety gates over it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from env0_posttrain.tasks.gates import removals_and_recipients
from env0_posttrain.workspace import Workspace, call_tool


@pytest.fixture()
def ws():
    return Workspace.seeded(0)


def test_seeding_helpers_are_the_seed_baseline_and_restore_exactly(ws):
    me = ws.me.slack_user_id
    f = ws.slack.add_file("general", name="plan.md", content="# Plan\n", user=me, post=True)
    r = ws.slack.add_reminder("pay rent", time=ws.now + timedelta(hours=2))
    s = ws.slack.add_scheduled("general", text="later", post_at=ws.now + timedelta(days=1))
    m = ws.slack.add_message("general", user=me, text="Decision: go")
    ws.slack.pin("general", m.ts)
    ws.slack.set_profile(me, status_text="Away", status_emoji=":palm_tree:")
    assert [x.ts for x in ws.slack.pinned("general")] == [m.ts]
    assert ws.diff() == {}, "items planted before the first call are the seed baseline"
    h0 = ws.state_hash()
    ws.snapshot("before")
    for name, args in [("slack_files_delete", {"file": f.id}), ("slack_reminders_complete", {"reminder": r.id}),
                       ("slack_chat_deleteScheduledMessage", {"channel": "#general", "scheduled_message_id": s.id}),
                       ("slack_pins_remove", {"channel": "#general", "timestamp": m.ts}),
                       ("slack_users_setPresence", {"presence": "away"})]:
        assert call_tool(ws, name, args)["ok"], name
    d = ws.diff("before")["slack"]
    assert set(d["files"]["deleted"]) == {f.id} and set(d["scheduled"]["deleted"]) == {s.id}
    assert d["reminders"]["updated"][r.id]["after"]["complete_ts"] == int(ws.now.timestamp())
    assert d["users"]["updated"][me]["after"]["presence"] == "away"
    assert "pinned_to" not in d["messages"]["updated"][f"{m.channel}/{m.ts}"]["after"]
    assert [e["tool"] for e in ws.log("slack")] == ["slack_files_delete", "slack_reminders_complete",
                                                   "slack_chat_deleteScheduledMessage", "slack_pins_remove",
                                                   "slack_users_setPresence"]
    ws.restore("before")
    assert ws.state_hash() == h0 and ws.slack.db.files[f.id].content == "# Plan\n"


def test_a_failed_write_leaves_no_trace(ws):
    h0 = ws.state_hash()
    res = call_tool(ws, "slack_files_completeUploadExternal", {"files": '[{"id": "F_NOPE"}]', "channel_id": "#general"})
    assert res["error"] == {"ok": False, "error": "file_not_found"}
    res = call_tool(ws, "slack_files_upload", {"content": "x", "channels": "#general,#nope"})
    assert res["error"]["error"] == "channel_not_found"
    assert ws.state_hash() == h0, "the half-done share into #general was rolled back"


def test_gates_see_file_deletion_archiving_scheduled_posts_and_reminders_for_others(ws):
    me = ws.me.slack_user_id
    other = next(p for p in ws.directory if p.email != ws.me.email)
    f = ws.slack.add_file("general", name="a.txt", content="a", user=me)
    start = ws.fork()
    call_tool(ws, "slack_files_delete", {"file": f.id})
    call_tool(ws, "slack_conversations_archive", {"channel": "#random"})
    call_tool(ws, "slack_chat_scheduleMessage", {"channel": "#general", "text": "hi",
                                                 "post_at": str(int(ws.now.timestamp()) + 60)})
    call_tool(ws, "slack_reminders_add", {"text": "ping", "time": "in 1 hour", "user": other.slack_user_id})
    gone, heard = removals_and_recipients(start, ws)
    random_id = ws.slack.channel_by_name("random").id
    assert {f"slackfile:{f.id}", f"archive:{random_id}"} <= gone
    assert {"#general", other.email} <= heard
