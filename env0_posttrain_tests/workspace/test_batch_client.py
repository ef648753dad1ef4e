"""Google's batch endpoints through googleapiclient's BatchHttpRequest (new_batch_http_request with callbacks): mixed
Gmail, Drive and Calendar calls on /batch, one API on /batch/drive/v3, each part through the same route, handler and
action log as a single request (and, on the env0 surface, through the auth gate); plus a thread's messages in the
order they were stored when the frozen clock gives them one timestamp."""

from __future__ import annotations

import json
import types

import pytest
from googleapiclient.errors import HttpError

from env0_posttrain.tasks.env0.seed.auth import seed_auth
from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain_tests.support.google_clients import local_service
from env0_posttrain_tests.support.live_workspace import reseed, server_fixture

pytestmark = pytest.mark.filterwarnings("ignore")


server = server_fixture(tls=False)


@pytest.fixture(scope="module")
def clients(server):
    return {api: local_service(server[0], api, version)
            for api, version in (("gmail", "v1"), ("drive", "v3"), ("calendar", "v3"))}


@pytest.fixture()
def ws(server):
    reseed(server[0])
    return server[1].state.ws


def _collect():
    got: dict[str, tuple] = {}

    def callback(request_id, response, exception):
        got[request_id] = (response, exception)
    return got, callback


def test_a_mixed_batch_answers_each_call_to_its_callback_in_order_of_the_action_log(ws, clients):
    gmail, drive, calendar = clients["gmail"], clients["drive"], clients["calendar"]
    folder = ws.drive.add_folder("Reports")
    got, callback = _collect()
    batch = gmail.new_batch_http_request(callback=callback)  # gmail's batchPath: /batch
    batch.add(gmail.users().labels().list(userId="me"), request_id="labels")
    batch.add(drive.files().update(fileId=folder.id, body={"name": "Reports 2026"}, fields="id,name"), request_id="rename")
    batch.add(calendar.events().insert(calendarId="primary", body={
        "summary": "Batch review", "start": {"dateTime": "2026-12-01T10:00:00Z"},
        "end": {"dateTime": "2026-12-01T11:00:00Z"}}), request_id="event")
    batch.add(drive.files().get(fileId="no-such-file"), request_id="missing")
    mark = len(ws.action_log)
    batch.execute()
    assert {l["id"] for l in got["labels"][0]["labels"]} >= {"INBOX", "SENT"} and got["labels"][1] is None
    assert got["rename"] == ({"id": folder.id, "name": "Reports 2026"}, None)
    assert got["event"][0]["summary"] == "Batch review"
    response, error = got["missing"]
    assert response is None and isinstance(error, HttpError) and error.resp.status == 404
    assert json.loads(error.content)["error"]["errors"][0]["reason"] == "notFound"
    assert ws.drive.db.files[folder.id].name == "Reports 2026"  # the writes happened, once each
    assert sum(e.summary == "Batch review" for e in ws.calendar.db.events.values()) == 1
    logged = ws.action_log[mark:]
    assert [(e["tool"], e["ok"], e["source"]) for e in logged] == [
        ("gmail_labels_list", True, "http"), ("drive_files_update", True, "http"),
        ("calendar_events_insert", True, "http"), ("drive_files_get", False, "http")]


def test_a_per_api_batch_path_takes_that_apis_calls_only(ws, clients):
    drive, gmail = clients["drive"], clients["gmail"]
    got, callback = _collect()
    batch = drive.new_batch_http_request(callback=callback)  # /batch/drive/v3
    batch.add(drive.files().list(pageSize=2, fields="files(id)"), request_id="files")
    batch.add(gmail.users().getProfile(userId="me"), request_id="gmail")
    mark = len(ws.action_log)
    batch.execute()
    assert len(got["files"][0]["files"]) == 2
    assert got["gmail"][0] is None and got["gmail"][1].resp.status == 404
    assert [e["tool"] for e in ws.action_log[mark:]] == ["drive_files_list"]  # the refused part never ran
    calendar = clients["calendar"]
    got, callback = _collect()
    batch = calendar.new_batch_http_request(callback=callback)  # /batch/calendar/v3
    batch.add(calendar.calendarList().list(), request_id="cals")
    batch.execute()
    assert any(c["primary"] for c in got["cals"][0]["items"] if "primary" in c)


def test_batch_limits_and_what_cannot_be_batched(ws, clients):
    drive = clients["drive"]
    batch = drive.new_batch_http_request()
    for _ in range(101):  # Drive takes 100 calls per batch
        batch.add(drive.about().get(fields="user"))
    with pytest.raises(HttpError) as e:
        batch.execute()
    assert e.value.resp.status == 400
    got, callback = _collect()
    batch = drive.new_batch_http_request(callback=callback)
    fid = ws.drive.add_file(name="n.txt", content="x").id
    batch.add(drive.files().get_media(fileId=fid), request_id="media")
    batch.execute()
    assert got["media"][1].resp.status == 400


def test_a_threads_messages_come_back_in_the_order_they_were_stored(ws, clients):
    gmail = clients["gmail"]
    first = gmail.users().messages().send(userId="me", body={"raw": _raw("Plan", "v1")}).execute()
    sent = [first["id"]] + [gmail.users().messages().send(userId="me", body={
        "raw": _raw("Re: Plan", f"reply {i}"), "threadId": first["threadId"]}).execute()["id"] for i in range(5)]
    stamps = {ws.gmail.db.messages[m].internalDate for m in sent}
    assert len(stamps) == 1  # the frozen clock: one timestamp for all six
    thread = gmail.users().threads().get(userId="me", id=first["threadId"], format="minimal").execute()
    assert [m["id"] for m in thread["messages"]] == sent
    listed = gmail.users().messages().list(userId="me", q="in:sent", maxResults=6).execute()["messages"]
    assert [m["id"] for m in listed] == sent[::-1]  # newest first: the last stored first
    ws.snapshot("order")
    gmail.users().messages().modify(userId="me", id=sent[2], body={"addLabelIds": ["STARRED"]}).execute()
    ws.restore("order")
    again = gmail.users().threads().get(userId="me", id=first["threadId"], format="minimal").execute()
    assert [m["id"] for m in again["messages"]] == sent


def _raw(subject: str, text: str) -> str:
    import base64
    from email.message import EmailMessage

    em = EmailMessage()
    em["To"], em["Subject"] = "ops@example.com", subject
    em.set_content(text)
    return base64.urlsafe_b64encode(em.as_bytes()).decode()


def test_on_the_env0_surface_each_part_passes_the_auth_gate_and_lands_in_the_services_log():
    ws = Workspace.seeded(0)
    seed_auth(ws, types.ModuleType("needles"), {})
    ws.auth.add_client(client_id="tester", allowed_scopes=["drive.readonly"], grant_types=["client_credentials"])
    surface = Env0Surface(ws, {"auth_enabled": True})
    token = ws.call("auth_admin_issueToken", {"client_id": "tester", "user_id": "user1", "scopes": ["drive.readonly"],
                                              "include_refresh": False}).body["access_token"]
    body = (b"--b1\r\nContent-Type: application/http\r\nContent-ID: <q+1>\r\n\r\n"
            b"GET /drive/v3/files?pageSize=1 HTTP/1.1\r\n\r\n"
            b"--b1\r\nContent-Type: application/http\r\nContent-ID: <q+2>\r\n\r\n"
            b"GET /gmail/v1/users/me/profile HTTP/1.1\r\n\r\n"
            b"--b1\r\nContent-Type: application/http\r\nContent-ID: <q+3>\r\n\r\n"
            b"POST /drive/v3/files HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"name\": \"x\"}\r\n--b1--\r\n")
    ctype = [(b"content-type", b"multipart/mixed; boundary=b1")]
    # the outer Authorization covers every part; a part for another service is refused as that port refuses it (404)
    for auth, want in ((None, [401, 404, 401]), (token, [200, 404, 403])):
        headers = ctype + ([(b"authorization", f"Bearer {auth}".encode())] if auth else [])
        mark = len(surface.log["gdrive"])
        status, out_headers, payload = surface.respond("gdrive", "POST", "/batch", b"", headers, body)
        assert status == 200 and dict(out_headers)[b"content-type"].startswith(b"multipart/mixed; boundary=")
        parts = payload.split(b"Content-ID: <response-")[1:]
        assert [p[:4] for p in parts] == [b"q+1>", b"q+2>", b"q+3>"]
        assert [int(p.split(b"HTTP/1.1 ")[1][:3]) for p in parts] == want
        assert [e["response_status"] for e in surface.log["gdrive"][mark:]] == want
