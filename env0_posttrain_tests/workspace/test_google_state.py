"""The Gmail settings/history and Drive replies/revisions/changes/shared drives are workspace state like any
other: seeded deterministically, in diff(), in the action log, and put back exactly by restore(); and the
workspace serves every Google route env0's mocks serve (when an env0 checkout or mirror is at hand)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain.workspace.seeding import populate
from env0_posttrain_tests.support.workspace import ok
from env0_posttrain_tests.support.paths import REPO as ROOT


def test_new_state_is_in_diff_log_and_restore():
    ws = Workspace.seeded(3)
    h0, seed_tables = ws.state_hash(), {k: dict(v) for k, v in ws.gmail.db.tables().items()}
    me, colleague = ws.me.email, ws.directory[2].email
    ok(ws, "gmail_settings_forwardingAddresses_create", {"body": {"forwardingEmail": colleague}})
    ok(ws, "gmail_settings_updateVacation", {"body": {"enableAutoReply": True, "responseSubject": "Away"}})
    flt = ok(ws, "gmail_settings_filters_create", {"body": {"criteria": {"subject": "invoice"},
                                                            "action": {"addLabelIds": ["STARRED"]}}})
    ok(ws, "gmail_threads_trash", {"id": ws.gmail.mailbox()[0].threadId})
    f = ws.drive.db.files[next(iter(ws.drive.db.comments.values())).fileId]
    comment = next(iter(ws.drive.db.comments))
    ok(ws, "drive_replies_create", {"fileId": f.id, "commentId": comment, "fields": "id",
                                    "body": {"content": "On it", "action": "resolve"}})
    ok(ws, "drive_drives_create", {"requestId": "r", "body": {"name": "Ops"}})
    g, d = ws.diff()["gmail"], ws.diff()["drive"]
    assert set(g["forwardingAddresses"]["added"]) == {f"{me}/{colleague}"}
    assert g["mailSettings"]["added"][f"{me}/vacation"]["value"]["responseSubject"] == "Away"
    assert set(g["filters"]["added"]) == {f"{me}/{flt['id']}"}
    assert {r["kind"] for r in g["historyLog"]["added"].values()} == {"labelAdded", "labelRemoved"}
    assert len(d["replies"]["added"]) == 1 and d["comments"]["updated"][comment]["after"]["resolved"] is True
    assert len(d["drives"]["added"]) == 1 and d["changeLog"]["added"]
    tools = [e["tool"] for e in ws.log()]
    assert tools == ["gmail_settings_forwardingAddresses_create", "gmail_settings_updateVacation",
                     "gmail_settings_filters_create", "gmail_threads_trash", "drive_replies_create", "drive_drives_create"]
    ws.restore("seed")
    assert ws.state_hash() == h0 and ws.log() == [] and ws.diff() == {}
    assert {k: dict(v) for k, v in ws.gmail.db.tables().items()} == seed_tables
    # a failed write leaves nothing behind, in the new tables too
    res = call_tool(ws, "gmail_settings_filters_create", {"body": {"criteria": {"from": "x"}, "action": {"forward": "a@b.c"}}})
    assert not res["ok"] and ws.state_hash() == h0


def test_seeded_settings_and_discussions_are_deterministic():
    a, b = Workspace(11), Workspace(11)
    populate(a)
    populate(b)
    assert a.state_hash() == b.state_hash()
    assert [f.criteria for f in a.gmail.filters_of()] == [{"subject": "receipt"}]
    comments = list(a.drive.db.comments.values())
    assert comments and all(c.authorEmail != a.me.email for c in comments)
    assert all(a.drive.db.files[c.fileId].id in a.docs.db.documents for c in comments)
    replies = list(a.drive.db.replies.values())
    assert all(r.commentId in a.drive.db.comments for r in replies)
    resolved = {r.commentId for r in replies if r.action == "resolve"}
    assert all(a.drive.db.comments[c].resolved for c in resolved)


MIRROR = os.environ.get("ENV0_ROOT", "/work/.mirror/benchflow-ai+env0/repo")


@pytest.mark.skipif(not Path(MIRROR).exists(), reason="no env0 checkout or mirror")
def test_every_env0_google_route_is_served():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import env0_route_parity
    finally:
        sys.path.remove(str(ROOT / "bench"))
    res = env0_route_parity.parity(MIRROR)
    assert {svc: r["missing"] for svc, r in res.items()} == {"gmail": [], "calendar": [], "drive": [], "docs": []}
    assert len(res["gmail"]["served"]) >= 60 and len(res["drive"]["served"]) >= 40
    # what is not a real method is mock-gdoc's comments/permissions (Drive's in the real API) and mock-gcal's profile
    assert all("-> real: drive." in r for r in res["docs"]["not_real"])


def test_history_and_change_logs_are_bounded(monkeypatch):
    from env0_posttrain.workspace.services.drive import state
    from env0_posttrain.workspace.services.gmail import mailbox

    monkeypatch.setattr(mailbox, "HISTORY_KEPT", 5)
    monkeypatch.setattr(state, "CHANGES_KEPT", 3)
    ws = Workspace.seeded(3)
    start = ok(ws, "gmail_getProfile", {})["historyId"]
    mid = ws.gmail.mailbox()[0].id
    for i in range(4):
        ok(ws, "gmail_messages_modify", {"id": mid, "body": {"addLabelIds" if i % 2 == 0 else "removeLabelIds": ["STARRED"]}})
    assert len(ok(ws, "gmail_history_list", {"startHistoryId": start})["history"]) == 4
    for i in range(4):
        ok(ws, "gmail_messages_modify", {"id": mid, "body": {"addLabelIds" if i % 2 == 0 else "removeLabelIds": ["STARRED"]}})
    assert len(ws.gmail.db.historyLog) == 5
    res = call_tool(ws, "gmail_history_list", {"startHistoryId": start})
    assert res["error"]["error"]["code"] == 404  # older than what is kept: a full sync
    assert len(ok(ws, "gmail_history_list", {"startHistoryId": str(ws.gmail.db.historyFloor)})["history"]) == 5
    token = ok(ws, "drive_changes_getStartPageToken", {})["startPageToken"]
    for i in range(5):
        ok(ws, "drive_files_create", {"body": {"name": f"f{i}"}})
    assert len(ws.drive.db.changeLog) == 3
    assert len(ok(ws, "drive_changes_list", {"pageToken": token})["changes"]) == 3
