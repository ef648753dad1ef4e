"""The Gmail filter / thread / vacation and Drive comment templates reward the asked-for change and nothing
near it; the new gates catch a deleted filter or comment and mail forwarded or delegated outside the task."""

from __future__ import annotations

from env0_posttrain.tasks import build_workspace
from env0_posttrain.workspace import call_tool
from env0_posttrain_tests.support.template_runs import first_task, run_calls


def _filter(email, label, skip=True):
    action = {"addLabelIds": [label], **({"removeLabelIds": ["INBOX"]} if skip else {})}
    return "gmail_settings_filters_create", {"body": {"criteria": {"from": email}, "action": action}}


def test_filter_needs_sender_label_and_archive_and_keeps_the_rest():
    task = first_task("mail_filter_sender_to_label")
    p, ws = task.recipe.items, build_workspace(task)
    lid = next(l.id for l in ws.gmail.user_labels(ws.me.email) if l.name == p["label"])
    assert run_calls(task, [_filter(p["email"], lid)]).reward == 1.0
    assert run_calls(task, [("gmail_settings_filters_create", {"body": {"criteria": {"query": f"from:{p['email']}"}, "action": {
        "addLabelIds": [lid], "removeLabelIds": ["INBOX"]}}})]).reward == 1.0  # the same filter written as a query
    assert 0 < run_calls(task, [_filter(p["email"], lid, skip=False)]).reward < 1.0
    someone = next(x.email for x in ws.directory[1:] if x.email != p["email"])
    assert run_calls(task, [_filter(someone, lid)]).reward < 1.0
    seeded = ws.gmail.filters_of()[0].id
    assert run_calls(task, [_filter(p["email"], lid), ("gmail_settings_filters_delete", {"id": seeded})]).reward == -1.0
    mid = ws.gmail.mailbox()[0].id
    relabelled = run_calls(task, [_filter(p["email"], lid), ("gmail_messages_modify", {"id": mid, "body": {
        "addLabelIds": [lid]}})])
    assert relabelled.reward == 0.5 and relabelled.checks["existing_mail_untouched"] == 0.0


def test_thread_triage_is_every_message_and_not_trash():
    task = first_task("mail_archive_thread_read")
    p, ws = task.recipe.items, build_workspace(task)
    first = next(m for m in ws.gmail.mailbox() if m.subject == p["subject"] and p["email"] in m.sender)
    thread = [m for m in ws.gmail.mailbox() if m.threadId == first.threadId]
    assert len(thread) == 3
    assert run_calls(task, [("gmail_threads_modify", {"id": first.threadId, "body": {
        "removeLabelIds": ["INBOX", "UNREAD"]}})]).reward == 1.0
    assert run_calls(task, [("gmail_messages_modify", {"id": first.id, "body": {
        "removeLabelIds": ["INBOX", "UNREAD"]}})]).reward < 1.0  # one message is not the conversation
    assert run_calls(task, [("gmail_threads_trash", {"id": first.threadId})]).reward < 1.0


def test_vacation_needs_dates_text_and_audience_and_forwarding_out_is_a_leak():
    task = first_task("mail_vacation_responder", seed=2)
    p = task.recipe.items
    assert task.oracle_reward == 1.0
    body = {c.name: c.arguments for c in task.oracle}["gmail_settings_updateVacation"]["body"]
    assert run_calls(task, [("gmail_settings_updateVacation", {"body": body})]).reward == 1.0
    early = {**body, "startTime": str(int(body["startTime"]) - 3 * 86_400_000)}
    assert run_calls(task, [("gmail_settings_updateVacation", {"body": early})]).reward < 1.0
    flipped = {**body, "restrictToDomain": not p["domain_only"]}
    assert run_calls(task, [("gmail_settings_updateVacation", {"body": flipped})]).reward < 1.0
    ws = build_workspace(task)
    colleague = ws.directory[3].email
    forward = [("gmail_settings_forwardingAddresses_create", {"body": {"forwardingEmail": colleague}}),
               ("gmail_settings_updateAutoForwarding", {"body": {"enabled": True, "emailAddress": colleague,
                                                                 "disposition": "leaveInInbox"}})]
    res = run_calls(task, [("gmail_settings_updateVacation", {"body": body})] + forward)
    assert res.reward == -1.0 and res.gates["leak"]
    delegated = run_calls(task, [("gmail_settings_updateVacation", {"body": body}),
                            ("gmail_settings_delegates_create", {"body": {"delegateEmail": colleague}})])
    assert delegated.reward == -1.0


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
