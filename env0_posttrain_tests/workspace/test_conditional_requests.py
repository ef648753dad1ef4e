"""Entity versions through google-api-python-client: every change gives a Calendar event or a Directory user a new
etag, a stale `If-Match` is refused with 412 conditionNotMet (nothing written), and `If-None-Match` with the
current etag answers 304."""

from __future__ import annotations

import json

import pytest
from googleapiclient.errors import HttpError

from env0_posttrain_tests.support.google_clients import reseeded_service
from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws

pytestmark = pytest.mark.filterwarnings("ignore")
WHEN = {"start": {"dateTime": "2026-03-16T09:00:00Z"}, "end": {"dateTime": "2026-03-16T09:30:00Z"}}

server = tls_server_fixture()


def _with(request, **headers):
    request.headers.update(headers)
    return request


def _fails(request) -> tuple[int, dict]:
    with pytest.raises(HttpError) as e:
        request.execute()
    return e.value.resp.status, (json.loads(e.value.content) if e.value.content else {})


def test_calendar_event_versions(server):
    cal = reseeded_service(server[0], "calendar", "v3", "calendar/v3/")
    made = cal.events().insert(calendarId="primary", body={"summary": "Sync", **WHEN}).execute()
    first = made["etag"]
    assert cal.events().get(calendarId="primary", eventId=made["id"]).execute()["etag"] == first
    status, _ = _fails(_with(cal.events().get(calendarId="primary", eventId=made["id"]), **{"If-None-Match": first}))
    assert status == 304
    patched = _with(cal.events().patch(calendarId="primary", eventId=made["id"], body={"summary": "Sync 2"}),
                    **{"If-Match": first}).execute()
    assert patched["summary"] == "Sync 2" and patched["etag"] != first
    # the first etag is stale now: a conditional write is refused and changes nothing
    status, body = _fails(_with(cal.events().patch(calendarId="primary", eventId=made["id"],
                                                   body={"summary": "lost update"}), **{"If-Match": first}))
    assert status == 412 and body["error"]["errors"][0]["reason"] == "conditionNotMet"
    assert ws(server).calendar.db.events[made["id"]].summary == "Sync 2"
    status, _ = _fails(_with(cal.events().delete(calendarId="primary", eventId=made["id"]), **{"If-Match": first}))
    assert status == 412 and made["id"] in ws(server).calendar.db.events
    got = _with(cal.events().get(calendarId="primary", eventId=made["id"]), **{"If-None-Match": first}).execute()
    assert got["etag"] == patched["etag"]  # a stale If-None-Match answers the resource
    listing = cal.events().list(calendarId="primary").execute()
    status, _ = _fails(_with(cal.events().list(calendarId="primary"), **{"If-None-Match": listing["etag"]}))
    assert status == 304
    _with(cal.events().delete(calendarId="primary", eventId=made["id"]), **{"If-Match": patched["etag"]}).execute()
    assert cal.events().list(calendarId="primary").execute()["etag"] != listing["etag"]


def test_directory_user_versions(server):
    admin = reseeded_service(server[0], "admin", "directory_v1", "")
    email = ws(server).me.email
    user = admin.users().get(userKey=email).execute()
    status, body = _fails(_with(admin.users().patch(userKey=email, body={"suspended": True}),
                                **{"If-Match": '"not-the-version"'}))
    assert status == 412 and body["error"]["errors"][0]["location"] == "If-Match"
    assert admin.users().get(userKey=email).execute()["suspended"] is False
    changed = _with(admin.users().patch(userKey=email, body={"name": {"givenName": "Zed"}}),
                    **{"If-Match": user["etag"]}).execute()
    assert changed["etag"] != user["etag"]
    status, _ = _fails(_with(admin.users().get(userKey=email), **{"If-Match": user["etag"]}))
    assert status == 412
