"""The mail family's thread template (families/mail.py): triage is the whole conversation, not one message, and
not the trash."""

from __future__ import annotations

from env0_posttrain.tasks import build_workspace
from env0_posttrain_tests.support.template_runs import first_task, run_calls


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
