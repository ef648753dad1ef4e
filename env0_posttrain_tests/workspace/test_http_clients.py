"""The official clients (googleapiclient from its packaged discovery documents, slack_sdk) against the live app."""

from __future__ import annotations

import base64
from email.message import EmailMessage

import httplib2
import pytest
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError
from googleapiclient.http import MediaInMemoryUpload
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from env0_posttrain_tests.support.live_workspace import reseeded_workspace_fixture, tls_server_fixture


pytestmark = pytest.mark.filterwarnings("ignore")


server = tls_server_fixture()


ws = reseeded_workspace_fixture()


def http():
    import httpx
    return httpx.Client(verify=False)


def google(server, name: str, version: str, path: str = ""):
    base, _ = server
    return build(name, version, http=httplib2.Http(disable_ssl_certificate_validation=True), static_discovery=True,
                 client_options={"api_endpoint": f"{base}/{path}"})


def test_gmail_client_lists_gets_sends_with_attachment_and_fetches_it(server, ws):
    gmail = google(server, "gmail", "v1")
    listed = gmail.users().messages().list(userId="me", q="is:unread", maxResults=5).execute()
    assert len(listed["messages"]) == 5 and set(listed["messages"][0]) == {"id", "threadId"}
    assert listed["nextPageToken"]
    nxt = gmail.users().messages().list(userId="me", q="is:unread", maxResults=5,
                                        pageToken=listed["nextPageToken"]).execute()
    assert {m["id"] for m in nxt["messages"]}.isdisjoint({m["id"] for m in listed["messages"]})
    msg = gmail.users().messages().get(userId="me", id=listed["messages"][0]["id"], format="metadata",
                                       metadataHeaders=["Subject", "From"]).execute()
    assert {h["name"] for h in msg["payload"]["headers"]} == {"Subject", "From"}

    em = EmailMessage()
    colleague = ws.directory[2].email
    em["To"], em["Subject"] = colleague, "Report"
    em.set_content("See attached.")
    em.add_attachment(b"col1,col2\n1,2\n", maintype="text", subtype="csv", filename="report.csv")
    raw = base64.urlsafe_b64encode(em.as_bytes()).decode()
    sent = gmail.users().messages().send(userId="me", body={"raw": raw}).execute()
    assert sent["labelIds"] == ["SENT"]
    full = gmail.users().messages().get(userId="me", id=sent["id"]).execute()
    part = next(p for p in full["payload"]["parts"] if p["filename"] == "report.csv")
    att = gmail.users().messages().attachments().get(userId="me", messageId=sent["id"],
                                                     id=part["body"]["attachmentId"]).execute()
    assert base64.urlsafe_b64decode(att["data"] + "==") == b"col1,col2\n1,2\n"
    assert any(m.subject == "Report" for m in ws.gmail.mailbox(colleague))  # delivered internally

    label = gmail.users().labels().create(userId="me", body={"name": "Follow up"}).execute()
    gmail.users().messages().modify(userId="me", id=sent["id"], body={"addLabelIds": [label["id"]]}).execute()
    found = gmail.users().messages().list(userId="me", q="label:follow-up").execute()
    assert [m["id"] for m in found["messages"]] == [sent["id"]]
    with pytest.raises(HttpError) as e:
        gmail.users().messages().get(userId="me", id="doesnotexist").execute()
    assert e.value.resp.status == 404


def test_gmail_media_upload_send_and_drafts(server, ws):
    gmail = google(server, "gmail", "v1")
    em = EmailMessage()
    em["To"], em["Subject"] = "partner@example.com", "Uploaded"
    em.set_content("via media upload")
    media = MediaInMemoryUpload(em.as_bytes(), mimetype="message/rfc822")
    sent = gmail.users().messages().send(userId="me", body={}, media_body=media).execute()
    assert ws.gmail.db.messages[sent["id"]].subject == "Uploaded"
    raw = base64.urlsafe_b64encode(em.as_bytes()).decode()
    draft = gmail.users().drafts().create(userId="me", body={"message": {"raw": raw}}).execute()
    assert gmail.users().drafts().list(userId="me").execute()["drafts"][0]["id"] == draft["id"]
    out = gmail.users().drafts().send(userId="me", body={"id": draft["id"]}).execute()
    assert "SENT" in out["labelIds"] and "DRAFT" not in out["labelIds"]


def test_calendar_client_insert_list_patch_freebusy_delete(server, ws):
    cal = google(server, "calendar", "v3", "calendar/v3/")
    assert cal.calendarList().list().execute()["items"][0]["primary"] is True
    guest = ws.directory[5].email
    ev = cal.events().insert(calendarId="primary", sendUpdates="all", body={
        "summary": "Planning", "start": {"dateTime": "2026-03-13T10:00:00Z"},
        "end": {"dateTime": "2026-03-13T11:00:00Z"}, "attendees": [{"email": guest}]}).execute()
    items = cal.events().list(calendarId="primary", timeMin="2026-03-13T00:00:00Z", timeMax="2026-03-14T00:00:00Z",
                              singleEvents=True, orderBy="startTime", q="planning").execute()["items"]
    assert [i["id"] for i in items] == [ev["id"]]
    patched = cal.events().patch(calendarId="primary", eventId=ev["id"], body={"summary": "Planning v2"}).execute()
    assert patched["summary"] == "Planning v2"
    fb = cal.freebusy().query(body={"timeMin": "2026-03-13T00:00:00Z", "timeMax": "2026-03-14T00:00:00Z",
                                    "items": [{"id": guest}]}).execute()
    assert {"start": "2026-03-13T10:00:00Z", "end": "2026-03-13T11:00:00Z"} in fb["calendars"][guest]["busy"]
    cal.events().delete(calendarId="primary", eventId=ev["id"]).execute()
    assert ws.calendar.db.events[ev["id"]].status == "cancelled"
    with pytest.raises(HttpError) as e:
        cal.events().list(calendarId="primary", orderBy="startTime").execute()
    assert e.value.resp.status == 400


def test_drive_client_upload_download_move_share(server, ws):
    drive = google(server, "drive", "v3", "drive/v3/")
    folder = drive.files().create(body={"name": "Reports", "mimeType": "application/vnd.google-apps.folder"}).execute()
    media = MediaInMemoryUpload(b"hello drive", mimetype="text/plain")
    f = drive.files().create(body={"name": "hello.txt", "parents": [folder["id"]]}, media_body=media,
                             fields="id,name,parents").execute()
    assert f["parents"] == [folder["id"]]
    assert drive.files().get_media(fileId=f["id"]).execute() == b"hello drive"
    listed = drive.files().list(q=f"'{folder['id']}' in parents and trashed = false",
                                fields="files(id,name)").execute()
    assert listed["files"] == [{"id": f["id"], "name": "hello.txt"}]
    root = ws.drive.root_id()
    moved = drive.files().update(fileId=f["id"], addParents=root, removeParents=folder["id"],
                                 body={"name": "hi.txt"}, fields="id,name,parents").execute()
    assert moved == {"id": f["id"], "name": "hi.txt", "parents": [root]}
    perm = drive.permissions().create(fileId=f["id"], body={"type": "user", "role": "reader",
                                                            "emailAddress": ws.directory[1].email}).execute()
    ids = [p["id"] for p in drive.permissions().list(fileId=f["id"]).execute()["permissions"]]
    assert perm["id"] in ids
    drive.permissions().delete(fileId=f["id"], permissionId=perm["id"]).execute()
    copy = drive.files().copy(fileId=f["id"], body={"name": "copy.txt"}).execute()
    drive.files().delete(fileId=copy["id"]).execute()
    assert copy["id"] not in ws.drive.db.files
    with pytest.raises(HttpError) as e:
        drive.files().list(q="name = ").execute()
    assert e.value.resp.status == 400


def test_docs_client_create_edit_get(server, ws):
    docs = google(server, "docs", "v1")
    doc = docs.documents().create(body={"title": "Minutes"}).execute()
    docs.documents().batchUpdate(documentId=doc["documentId"], body={"requests": [
        {"insertText": {"location": {"index": 1}, "text": "Action items: none\n"}},
        {"replaceAllText": {"containsText": {"text": "none", "matchCase": True}, "replaceText": "ship it"}},
    ]}).execute()
    got = docs.documents().get(documentId=doc["documentId"]).execute()
    text = "".join(el["textRun"]["content"] for c in got["body"]["content"] if "paragraph" in c
                   for el in c["paragraph"]["elements"])
    assert text.startswith("Action items: ship it\n")
    assert ws.drive.db.files[doc["documentId"]].name == "Minutes"


def test_admin_directory_client_users_tokens_groups(server, ws):
    admin = google(server, "admin", "directory_v1")
    users = admin.users().list(customer="my_customer", query="isAdmin=true").execute()["users"]
    assert ws.me.email in [u["primaryEmail"] for u in users]
    person = next(p for p in ws.directory if ws.admin.tokens_list(p.email)["items"])
    tokens = admin.tokens().list(userKey=person.email).execute()["items"]
    admin.tokens().delete(userKey=person.email, clientId=tokens[0]["clientId"]).execute()
    assert len(admin.tokens().list(userKey=person.email).execute()["items"]) == len(tokens) - 1
    admin.users().update(userKey=person.email, body={"suspended": True}).execute()
    assert admin.users().get(userKey=person.email).execute()["suspended"] is True
    groups = admin.groups().list(customer="my_customer").execute()["groups"]
    group = next(g for g in groups if g["email"].startswith("engineering@"))
    admin.members().insert(groupKey=group["email"], body={"email": ws.me.email, "role": "MANAGER"}).execute()
    members = admin.members().list(groupKey=group["email"]).execute()["members"]
    assert {"email": ws.me.email, "role": "MANAGER"}.items() <= next(
        m for m in members if m["email"] == ws.me.email).items()
    admin.verificationCodes().generate(userKey=person.email).execute()
    assert len(admin.verificationCodes().list(userKey=person.email).execute()["items"]) == 10
    with pytest.raises(HttpError) as e:
        admin.users().get(userKey="ghost@nowhere.example").execute()
    assert e.value.resp.status == 404


def test_slack_webclient(server, ws):
    base, _ = server
    import ssl
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    client = WebClient(token="xoxp-local", base_url=f"{base}/api/", ssl=ctx)
    chans = client.conversations_list(types="public_channel,private_channel")["channels"]
    general = next(c for c in chans if c["name"] == "general")
    posted = client.chat_postMessage(channel=general["id"], text="Hello from the test")
    hist = client.conversations_history(channel=general["id"], limit=1)
    assert hist["messages"][0]["ts"] == posted["ts"] and hist["has_more"] is True
    page2 = client.conversations_history(channel=general["id"], limit=1,
                                         cursor=hist["response_metadata"]["next_cursor"])
    assert page2["messages"][0]["ts"] != posted["ts"]
    client.reactions_add(channel=general["id"], timestamp=posted["ts"], name="thumbsup")
    client.chat_update(channel=general["id"], ts=posted["ts"], text="edited")
    new = client.conversations_create(name="proj-apollo")["channel"]
    colleague = ws.directory[3]
    client.conversations_invite(channel=new["id"], users=colleague.slack_user_id)
    assert client.users_lookupByEmail(email=colleague.email)["user"]["id"] == colleague.slack_user_id
    assert client.users_info(user=colleague.slack_user_id)["user"]["profile"]["email"] == colleague.email
    assert client.conversations_info(channel=new["id"])["channel"]["num_members"] == 2
    with pytest.raises(SlackApiError) as e:
        client.chat_postMessage(channel="C_NOPE", text="x")
    assert e.value.response["error"] == "channel_not_found"
    with pytest.raises(SlackApiError) as e:
        client.conversations_create(name="proj-apollo")
    assert e.value.response["error"] == "name_taken"


def test_admin_surface_snapshot_restore_diff_actions(server, ws):
    base, app = server
    httpx = http()
    h0 = httpx.get(f"{base}/_admin/state_hash").json()["state_hash"]
    httpx.post(f"{base}/_admin/snapshot", json={"name": "before"}).raise_for_status()
    httpx.post(f"{base}/api/chat.postMessage", data={"channel": "general", "text": "x"}).raise_for_status()
    assert httpx.get(f"{base}/_admin/slack/diff").json()["slack"]["messages"]["added"]
    assert httpx.get(f"{base}/_admin/slack/actions").json()[-1]["tool"] == "slack_chat_postMessage"
    assert httpx.get(f"{base}/_admin/state_hash").json()["state_hash"] != h0
    assert httpx.post(f"{base}/_admin/restore", json={"name": "before"}).json()["state_hash"] == h0
    assert httpx.post(f"{base}/_admin/restore", json={"name": "nope"}).status_code == 404
    assert httpx.get(f"{base}/_admin/nosuch/state").status_code == 404
    gmail_state = httpx.get(f"{base}/_admin/gmail/state").json()
    assert set(gmail_state) >= {"messages", "labels", "drafts"}
    assert httpx.post(f"{base}/_admin/seed", json={"seed": 4}).status_code == 412  # would drop "before"
    seeded = httpx.post(f"{base}/_admin/seed", json={"seed": 4, "drop_snapshots": True}).json()
    assert seeded["state_hash"] == app.state.ws.state_hash() and seeded["dropped_snapshots"] == ["before"]
