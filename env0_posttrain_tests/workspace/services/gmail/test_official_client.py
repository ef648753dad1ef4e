"""google-api-python-client (packaged discovery document) drives the Gmail v1 methods env0's mock-gmail serves
beyond the basics: thread writes, drafts.update, labels.update, messages insert/import, history, watch/stop
and users.settings.*. Each request goes over HTTP to the live app; state is checked on the workspace."""

from __future__ import annotations

import base64
from email.message import EmailMessage

import pytest

from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws
from env0_posttrain_tests.support.google_clients import reseeded_service, status_of

pytestmark = pytest.mark.filterwarnings("ignore")


server = tls_server_fixture()


@pytest.fixture()
def gmail(server):
    return reseeded_service(server[0], "gmail", "v1", "").users()


def raw(sender: str, to: str, subject: str, body: str, date: str | None = None) -> str:
    em = EmailMessage()
    em["From"], em["To"], em["Subject"] = sender, to, subject
    if date:
        em["Date"] = date
    em.set_content(body)
    return base64.urlsafe_b64encode(em.as_bytes()).decode()


def test_thread_modify_trash_untrash_delete(server, gmail):
    mine = ws(server).gmail.mailbox()
    tid = next(m.threadId for m in mine if "INBOX" in m.labelIds)
    label = gmail.labels().create(userId="me", body={"name": "Triage"}).execute()["id"]
    got = gmail.threads().modify(userId="me", id=tid, body={"addLabelIds": [label], "removeLabelIds": ["UNREAD"]}).execute()
    assert got["id"] == tid and all(label in m["labelIds"] and "UNREAD" not in m["labelIds"] for m in got["messages"])
    assert status_of(gmail.threads().modify(userId="me", id=tid, body={})) == (400, "invalidArgument")
    assert status_of(gmail.threads().modify(userId="me", id=tid, body={"addLabelIds": ["Nope"]})) == (400, "invalidArgument")
    trashed = gmail.threads().trash(userId="me", id=tid).execute()
    assert all("TRASH" in m["labelIds"] and "INBOX" not in m["labelIds"] for m in trashed["messages"])
    back = gmail.threads().untrash(userId="me", id=tid).execute()
    assert all("TRASH" not in m["labelIds"] for m in back["messages"])
    ids = [m["id"] for m in back["messages"]]
    gmail.threads().delete(userId="me", id=tid).execute()
    assert not any(i in ws(server).gmail.db.messages for i in ids)
    assert status_of(gmail.threads().get(userId="me", id=tid)) == (404, "notFound")


def test_drafts_update_and_labels_update(server, gmail):
    d = gmail.drafts().create(userId="me", body={"message": {"raw": raw("me@x", "a@b.com", "v1", "first")}}).execute()
    old_mid = d["message"]["id"]
    upd = gmail.drafts().update(userId="me", id=d["id"], body={
        "message": {"raw": raw("me@x", ws(server).directory[2].email, "v2", "second")}}).execute()
    assert upd["id"] == d["id"] and upd["message"]["id"] != old_mid and old_mid not in ws(server).gmail.db.messages
    full = gmail.drafts().get(userId="me", id=d["id"]).execute()
    assert {h["name"]: h["value"] for h in full["message"]["payload"]["headers"]}["Subject"] == "v2"
    assert status_of(gmail.drafts().update(userId="me", id="r-nope", body={"message": {"raw": raw("a", "b@c.d", "s", "b")}})) \
        == (404, "notFound")
    label = gmail.labels().create(userId="me", body={"name": "Old", "labelListVisibility": "labelHide"}).execute()
    put = gmail.labels().update(userId="me", id=label["id"], body={"name": "New"}).execute()
    assert put["name"] == "New" and put["labelListVisibility"] == "labelShow"  # update resets what it leaves out
    assert status_of(gmail.labels().update(userId="me", id=label["id"], body={"color": {}})) == (400, "invalidArgument")
    assert status_of(gmail.labels().update(userId="me", id="INBOX", body={"name": "x"})) == (400, "invalidArgument")


def test_insert_import_history_and_watch(server, gmail):
    me = ws(server).me.email
    start = gmail.getProfile(userId="me").execute()["historyId"]
    ins = gmail.messages().insert(userId="me", internalDateSource="dateHeader", body={
        "raw": raw("Vendor <billing@vendor.example>", me, "Invoice 7", "Due soon", "Mon, 02 Mar 2026 10:00:00 +0000"),
        "labelIds": ["INBOX"]}).execute()
    row = ws(server).gmail.db.messages[ins["id"]]
    assert ins["labelIds"] == ["INBOX"] and row.internalDate == 1772445600000 and row.subject == "Invoice 7"
    receipts = next(l.id for l in ws(server).gmail.user_labels(me) if l.name == "Receipts")
    imp = gmail.messages().import_(userId="me", body={"raw": raw("Shop <no-reply@shop.example>", me, "Your receipt",
                                                                 "Thanks"), "labelIds": ["INBOX", "UNREAD"]}).execute()
    assert receipts in imp["labelIds"]  # the seeded receipts filter acted on the imported mail, not on the inserted one
    gmail.messages().modify(userId="me", id=ins["id"], body={"addLabelIds": ["STARRED"]}).execute()
    gmail.messages().delete(userId="me", id=imp["id"]).execute()
    hist = gmail.history().list(userId="me", startHistoryId=start).execute()
    kinds = [k for h in hist["history"] for k in h if k not in ("id", "messages")]
    assert kinds == ["messagesAdded", "messagesAdded", "labelsAdded", "labelsAdded", "messagesDeleted"]
    assert [int(h["id"]) for h in hist["history"]] == sorted(int(h["id"]) for h in hist["history"])
    assert hist["historyId"] == gmail.getProfile(userId="me").execute()["historyId"]
    only = gmail.history().list(userId="me", startHistoryId=start, historyTypes=["labelAdded"]).execute()["history"]
    assert [e["labelsAdded"][0]["labelIds"] for e in only] == [[receipts], ["STARRED"]]
    assert "history" not in gmail.history().list(userId="me", startHistoryId=hist["historyId"]).execute()
    assert status_of(gmail.history().list(userId="me", startHistoryId="5")) == (404, "notFound")
    older = str(int(start) - 1)  # history is kept from the end of the seeding on: older ids need a full sync
    assert status_of(gmail.history().list(userId="me", startHistoryId=older)) == (404, "notFound")
    assert status_of(gmail.messages().insert(userId="me", body={"labelIds": ["INBOX"]})) == (400, "invalidArgument")
    w = gmail.watch(userId="me", body={"topicName": "projects/p/topics/mail", "labelIds": ["INBOX"]}).execute()
    assert int(w["expiration"]) > ws(server).now_ms() and me in ws(server).gmail.db.watches
    assert status_of(gmail.watch(userId="me", body={"topicName": "mail"})) == (400, "invalidArgument")
    gmail.stop(userId="me").execute()
    assert me not in ws(server).gmail.db.watches


def test_filters_forwarding_and_auto_forwarding(server, gmail):
    s, w = gmail.settings(), ws(server)
    boss, outsider = w.directory[1].email, "me@personal.example"
    label = gmail.labels().create(userId="me", body={"name": "Boss"}).execute()["id"]
    f = s.filters().create(userId="me", body={"criteria": {"from": boss}, "action": {
        "addLabelIds": [label, "STARRED"], "removeLabelIds": ["INBOX"]}}).execute()
    assert f["id"] and f["criteria"] == {"from": boss}
    assert s.filters().get(userId="me", id=f["id"]).execute() == f
    assert f in s.filters().list(userId="me").execute()["filter"]
    assert status_of(s.filters().create(userId="me", body={"criteria": {"from": boss}, "action": {
        "addLabelIds": [label, "STARRED"], "removeLabelIds": ["INBOX"]}})) == (400, "failedPrecondition")  # duplicate
    assert status_of(s.filters().create(userId="me", body={"criteria": {}, "action": {"addLabelIds": ["STARRED"]}})) \
        == (400, "invalidArgument")
    assert status_of(s.filters().create(userId="me", body={"criteria": {"from": "x"}, "action": {"forward": outsider}})) \
        == (400, "failedPrecondition")
    w.gmail.add_message(sender=f"Boss <{boss}>", subject="planted before", body="x")  # seeding does not filter
    sent = w.gmail.store(boss, sender=f"Boss <{boss}>", to=[w.me.email], subject="Quarterly plan", body="see doc",
                         labels=("SENT",))
    w.gmail.deliver(sent)  # the boss mails the agent user: delivery runs the filter
    got = next(m for m in w.gmail.mailbox() if m.subject == "Quarterly plan")
    assert label in got.labelIds and "STARRED" in got.labelIds and "INBOX" not in got.labelIds
    s.filters().delete(userId="me", id=f["id"]).execute()
    assert status_of(s.filters().get(userId="me", id=f["id"])) == (404, "notFound")

    ok = s.forwardingAddresses().create(userId="me", body={"forwardingEmail": w.directory[3].email}).execute()
    assert ok["verificationStatus"] == "accepted"
    pend = s.forwardingAddresses().create(userId="me", body={"forwardingEmail": outsider}).execute()
    assert pend["verificationStatus"] == "pending"
    assert status_of(s.forwardingAddresses().create(userId="me", body={"forwardingEmail": outsider})) == (409, "alreadyExists")
    assert len(s.forwardingAddresses().list(userId="me").execute()["forwardingAddresses"]) == 2
    assert status_of(s.updateAutoForwarding(userId="me", body={"enabled": True, "emailAddress": outsider,
                                                                "disposition": "archive"})) == (400, "failedPrecondition")
    auto = s.updateAutoForwarding(userId="me", body={"enabled": True, "emailAddress": w.directory[3].email,
                                                      "disposition": "archive"}).execute()
    assert auto == s.getAutoForwarding(userId="me").execute() and auto["enabled"] is True
    s.forwardingAddresses().delete(userId="me", forwardingEmail=w.directory[3].email).execute()
    assert s.getAutoForwarding(userId="me").execute() == {"enabled": False}  # forwarding stops with its address
    assert status_of(s.forwardingAddresses().get(userId="me", forwardingEmail=w.directory[3].email)) == (404, "notFound")


def test_send_as_delegates_and_single_settings(server, gmail):
    s, w = gmail.settings(), ws(server)
    me = w.me.email
    primary = s.sendAs().get(userId="me", sendAsEmail=me).execute()
    assert primary["isPrimary"] and primary["isDefault"] and w.company.name in primary["signature"]  # seeded signature
    assert s.sendAs().patch(userId="me", sendAsEmail=me, body={"signature": "-- Ana"}).execute()["signature"] == "-- Ana"
    alias = f"support@{w.domain}"
    made = s.sendAs().create(userId="me", body={"sendAsEmail": alias, "displayName": "Support", "isDefault": True}).execute()
    assert made["verificationStatus"] == "accepted" and made["isDefault"] and not made["isPrimary"]
    assert [x["isDefault"] for x in s.sendAs().list(userId="me").execute()["sendAs"]] == [False, True]
    put = s.sendAs().update(userId="me", sendAsEmail=alias, body={"displayName": "Help desk"}).execute()
    assert put["displayName"] == "Help desk" and put["signature"] == ""
    ext = s.sendAs().create(userId="me", body={"sendAsEmail": "ana@personal.example"}).execute()
    assert ext["verificationStatus"] == "pending"
    s.sendAs().verify(userId="me", sendAsEmail="ana@personal.example").execute()
    assert status_of(s.sendAs().verify(userId="me", sendAsEmail=alias)) == (400, "failedPrecondition")
    assert status_of(s.sendAs().delete(userId="me", sendAsEmail=me)) == (400, "invalidArgument")
    s.sendAs().delete(userId="me", sendAsEmail=alias).execute()
    assert status_of(s.sendAs().get(userId="me", sendAsEmail=alias)) == (404, "notFound")

    colleague = w.directory[4].email
    assert s.delegates().create(userId="me", body={"delegateEmail": colleague}).execute() == {
        "delegateEmail": colleague, "verificationStatus": "accepted"}
    assert status_of(s.delegates().create(userId="me", body={"delegateEmail": "x@outside.example"})) \
        == (400, "invalidArgument")
    assert s.delegates().list(userId="me").execute()["delegates"][0]["delegateEmail"] == colleague
    assert s.delegates().get(userId="me", delegateEmail=colleague).execute()["delegateEmail"] == colleague
    s.delegates().delete(userId="me", delegateEmail=colleague).execute()
    assert s.delegates().list(userId="me").execute() == {}

    assert s.getVacation(userId="me").execute() == {"enableAutoReply": False}
    vac = {"enableAutoReply": True, "responseSubject": "Away", "responseBodyPlainText": "Back Monday",
           "restrictToDomain": True, "startTime": "1773230400000", "endTime": "1773576000000"}
    assert s.updateVacation(userId="me", body=vac).execute() == vac == s.getVacation(userId="me").execute()
    assert status_of(s.updateVacation(userId="me", body={**vac, "endTime": "1"})) == (400, "invalidArgument")
    assert s.getImap(userId="me").execute()["enabled"] is True
    assert s.updateImap(userId="me", body={"enabled": False}).execute()["enabled"] is False
    assert status_of(s.updateImap(userId="me", body={"expungeBehavior": "shred"})) == (400, "invalidArgument")
    assert s.updatePop(userId="me", body={"accessWindow": "allMail", "disposition": "archive"}).execute()["accessWindow"] \
        == "allMail"
    assert s.updateLanguage(userId="me", body={"displayLanguage": "fr"}).execute() == {"displayLanguage": "fr"}
    assert s.getLanguage(userId="me").execute() == {"displayLanguage": "fr"}
    assert status_of(s.updateLanguage(userId="me", body={"displayLanguage": ""})) == (400, "invalidArgument")
