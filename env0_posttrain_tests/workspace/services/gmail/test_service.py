"""Gmail: the q grammar, formats, threads, labels, drafts, delivery inside the company."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone

import pytest

from env0_posttrain.workspace import Workspace, call_tool


@pytest.fixture()
def ws():
    ws = Workspace.seeded(11)
    ann = ws.directory[5]
    ws.gmail.add_label("Clients")
    ws.planted = {
        "old": ws.gmail.add_message(sender=f"{ann.name} <{ann.email}>", subject="Budget draft v2",
                                    body="Numbers for the offsite budget", date=datetime(2026, 2, 1, tzinfo=timezone.utc),
                                    unread=False),
        "new": ws.gmail.add_message(sender="Vendor <sales@vendor.example>", subject="Quote 77",
                                    body="Attached quote for the chairs", date=ws.now - timedelta(days=1),
                                    attachments=[{"filename": "quote-77.pdf", "mimeType": "application/pdf",
                                                  "content": b"%PDF quote"}]),
    }
    return ws


def ids(ws, q, **extra):
    res = call_tool(ws, "gmail_messages_list", {"q": q, "maxResults": 500, **extra})
    assert res["ok"], res
    return {m["id"] for m in res["result"].get("messages", [])}


def test_search_operators(ws):
    old, new = ws.planted["old"].id, ws.planted["new"].id
    ann = ws.directory[5]
    assert old in ids(ws, f"from:{ann.email}") and new not in ids(ws, f"from:{ann.email}")
    assert ids(ws, 'subject:"budget draft"') >= {old}
    assert new in ids(ws, "has:attachment filename:quote-77.pdf")
    assert new in ids(ws, "is:unread") and old not in ids(ws, "is:unread")
    assert old in ids(ws, "before:2026/02/02 after:2026/01/31")
    assert new in ids(ws, "newer_than:2d") and old not in ids(ws, "newer_than:2d")
    assert {old, new} <= ids(ws, "chairs OR offsite")
    assert old not in ids(ws, "offsite -budget")
    assert {old, new} <= ids(ws, "{chairs offsite}")
    assert ids(ws, "label:nonexistent") == set()
    assert ids(ws, "to:me") >= {old, new}


def test_list_pages_and_labels_filter(ws):
    first = call_tool(ws, "gmail_messages_list", {"maxResults": 7})["result"]
    second = call_tool(ws, "gmail_messages_list", {"maxResults": 7, "pageToken": first["nextPageToken"]})["result"]
    assert len(first["messages"]) == 7 and not {m["id"] for m in first["messages"]} & {m["id"] for m in second["messages"]}
    assert first["resultSizeEstimate"] == len(ws.gmail.mailbox())
    only_unread = ids(ws, "", labelIds=["UNREAD"])
    assert only_unread == ids(ws, "is:unread")


def test_trash_hides_from_search_until_untrash(ws):
    new = ws.planted["new"].id
    call_tool(ws, "gmail_messages_trash", {"id": new})
    assert new not in ids(ws, "quote") and new in ids(ws, "in:trash")
    call_tool(ws, "gmail_messages_untrash", {"id": new})
    assert new in ids(ws, "quote")


def test_formats(ws):
    new = ws.planted["new"].id
    minimal = call_tool(ws, "gmail_messages_get", {"id": new, "format": "minimal"})["result"]
    assert "payload" not in minimal and minimal["snippet"].startswith("Attached quote")
    raw = call_tool(ws, "gmail_messages_get", {"id": new, "format": "raw"})["result"]["raw"]
    assert b"Subject: Quote 77" in base64.urlsafe_b64decode(raw + "==")
    full = call_tool(ws, "gmail_messages_get", {"id": new})["result"]
    assert full["payload"]["mimeType"] == "multipart/mixed"
    assert full["payload"]["parts"][1]["filename"] == "quote-77.pdf"
    bad = call_tool(ws, "gmail_messages_get", {"id": new, "format": "weird"})
    assert bad["error"]["error"]["code"] == 400


def test_reply_threads_and_delivers_to_colleague(ws):
    ann = ws.directory[5]
    old = ws.planted["old"]
    r = call_tool(ws, "gmail_messages_send", {"to": ann.email, "subject": "Re: Budget draft v2", "body_text": "ok",
                                              "threadId": old.threadId})["result"]
    assert r["threadId"] == old.threadId
    thread = call_tool(ws, "gmail_threads_get", {"id": old.threadId, "format": "minimal"})["result"]
    assert [m["id"] for m in thread["messages"]][-1] == r["id"]
    inbox = ws.gmail.mailbox(ann.email)
    assert inbox[0].subject == "Re: Budget draft v2" and "UNREAD" in inbox[0].labelIds
    threads = call_tool(ws, "gmail_threads_list", {"q": "budget"})["result"]["threads"]
    assert threads[0]["id"] == old.threadId


def test_send_to_unknown_internal_address_bounces(ws):
    call_tool(ws, "gmail_messages_send", {"to": f"nobody@{ws.domain}", "subject": "hi", "body_text": "x"})
    assert ws.gmail.mailbox()[0].subject == "Delivery Status Notification (Failure)"


def test_labels_crud_and_conflicts(ws):
    created = call_tool(ws, "gmail_labels_create", {"body": {"name": "Receipts 2026"}})["result"]
    dup = call_tool(ws, "gmail_labels_create", {"body": {"name": "receipts 2026"}})
    assert dup["error"]["error"]["code"] == 409
    assert call_tool(ws, "gmail_labels_create", {"body": {"name": "INBOX"}})["error"]["error"]["code"] == 400
    new = ws.planted["new"].id
    call_tool(ws, "gmail_messages_modify", {"id": new, "body": {"addLabelIds": [created["id"]]}})
    assert new in ids(ws, "label:receipts-2026")
    patched = call_tool(ws, "gmail_labels_patch", {"id": created["id"], "body": {"name": "Receipts"}})
    assert patched["ok"] is False  # the seeded "Receipts" label exists
    call_tool(ws, "gmail_labels_delete", {"id": created["id"]})
    assert created["id"] not in ws.gmail.db.messages[new].labelIds
    assert call_tool(ws, "gmail_labels_delete", {"id": "INBOX"})["ok"] is False


def test_drafts_create_list_send(ws):
    d = call_tool(ws, "gmail_drafts_create", {"to": ws.directory[2].email, "subject": "Agenda", "body_text": "1. x"})
    did = d["result"]["id"]
    assert [x["id"] for x in call_tool(ws, "gmail_drafts_list", {})["result"]["drafts"]] == [did]
    sent = call_tool(ws, "gmail_drafts_send", {"body": {"id": did}})["result"]
    assert sent["labelIds"] == ["SENT"]
    assert call_tool(ws, "gmail_drafts_list", {})["result"].get("drafts") is None
    assert call_tool(ws, "gmail_drafts_send", {"body": {"id": did}})["error"]["error"]["code"] == 404


def test_other_mailboxes_are_not_reachable(ws):
    res = call_tool(ws, "gmail_messages_list", {"userId": ws.directory[5].email})
    assert res["error"]["error"]["code"] == 403


def test_mail_to_a_group_reaches_its_members(ws):
    eng = [p for p in ws.directory if p.department == "Engineering"]
    call_tool(ws, "gmail_messages_send", {"to": f"engineering@{ws.domain}", "subject": "Deploy freeze", "body_text": "x"})
    assert all(ws.gmail.mailbox(p.email)[0].subject == "Deploy freeze" for p in eng)
    assert ws.gmail.mailbox()[0].subject == "Deploy freeze"  # my sent copy, no bounce
    assert "SENT" in ws.gmail.mailbox()[0].labelIds
