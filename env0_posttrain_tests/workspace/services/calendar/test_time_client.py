"""Calendar time as Google keeps it, driven by google-api-python-client (packaged discovery document, only the base
address set) over HTTP: local times in their zone, answers with offsets, recurrence expanded across DST, instances
read / moved / cancelled by id, freebusy keyed by the ids asked, incremental sync with syncToken."""

from __future__ import annotations

from datetime import datetime

import pytest

from env0_posttrain_tests.support.google_clients import reseeded_service, status_of
from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws

pytestmark = pytest.mark.filterwarnings("ignore")
server = tls_server_fixture()
NY, LA = "America/New_York", "America/Los_Angeles"


@pytest.fixture()
def cal(server):
    return reseeded_service(server[0], "calendar", "v3", "calendar/v3/")


def at(value: str) -> datetime:
    return datetime.fromisoformat(value)


def local_event(day: str, start: str, end: str, tz: str, **extra) -> dict:
    return {"summary": extra.pop("summary", "Standup"), "start": {"dateTime": f"{day}T{start}", "timeZone": tz},
            "end": {"dateTime": f"{day}T{end}", "timeZone": tz}, **extra}


def test_a_local_time_is_read_in_its_zone_stored_listed_and_busy_at_that_instant(server, cal):
    summer = cal.events().insert(calendarId="primary", body=local_event("2026-03-16", "09:00:00", "10:00:00", NY)).execute()
    winter = cal.events().insert(calendarId="primary", body=local_event("2026-03-06", "09:00:00", "10:00:00", NY)).execute()
    stored = ws(server).calendar.db.events
    assert stored[summer["id"]].start == {"dateTime": "2026-03-16T13:00:00Z", "timeZone": NY}  # EDT since March 8
    assert stored[winter["id"]].start == {"dateTime": "2026-03-06T14:00:00Z", "timeZone": NY}  # EST
    # answers: RFC 3339 with an offset, in the calendar's zone (UTC here) or the one asked for; the event keeps its zone
    assert summer["start"] == {"dateTime": "2026-03-16T13:00:00Z", "timeZone": NY}
    got = cal.events().get(calendarId="primary", eventId=summer["id"], timeZone=NY).execute()
    assert got["start"] == {"dateTime": "2026-03-16T09:00:00-04:00", "timeZone": NY}
    assert got["end"]["dateTime"] == "2026-03-16T10:00:00-04:00"
    assert cal.events().get(calendarId="primary", eventId=winter["id"], timeZone=NY).execute()["start"]["dateTime"] \
        == "2026-03-06T09:00:00-05:00"
    listed = cal.events().list(calendarId="primary", timeMin="2026-03-16T12:30:00Z", timeMax="2026-03-16T13:30:00Z",
                               timeZone=LA).execute()
    mine = next(i for i in listed["items"] if i["id"] == summer["id"])
    assert mine["start"]["dateTime"] == "2026-03-16T06:00:00-07:00" and listed["timeZone"] == "UTC"
    assert summer["id"] not in [i["id"] for i in cal.events().list(
        calendarId="primary", timeMin="2026-03-16T09:00:00Z", timeMax="2026-03-16T10:00:00Z").execute()["items"]]
    cal.calendars().patch(calendarId="primary", body={"timeZone": "Europe/Paris"}).execute()
    assert cal.events().get(calendarId="primary", eventId=summer["id"]).execute()["start"]["dateTime"] \
        == "2026-03-16T14:00:00+01:00"  # the calendar's zone, when no timeZone is asked
    busy = cal.freebusy().query(body={"timeMin": "2026-03-16T12:00:00Z", "timeMax": "2026-03-16T15:00:00Z",
                                      "items": [{"id": "primary"}]}).execute()["calendars"]["primary"]["busy"]
    assert {"start": "2026-03-16T13:00:00Z", "end": "2026-03-16T14:00:00Z"} in busy
    assert status_of(cal.events().insert(calendarId="primary", body={
        "start": {"dateTime": "2026-03-16T09:00:00"}, "end": {"dateTime": "2026-03-16T10:00:00"}})) == (400, "required")
    assert status_of(cal.events().insert(calendarId="primary", body=local_event(
        "2026-03-16", "09:00:00", "10:00:00", "Mars/Olympus_Mons"))) == (400, "invalid")
    assert status_of(cal.events().get(calendarId="primary", eventId=summer["id"], timeZone="Nowhere/Else")) \
        == (400, "invalid")


def test_a_weekly_event_stays_at_its_local_hour_across_a_dst_change(server, cal):
    body = local_event("2026-03-02", "10:00:00", "10:30:00", LA, summary="Quokka planning",
                       recurrence=["RRULE:FREQ=WEEKLY;UNTIL=20260330", "EXDATE;TZID=America/Los_Angeles:20260316T100000",
                                   "RDATE;TZID=America/Los_Angeles:20260318T150000"])
    series = cal.events().insert(calendarId="primary", body=body).execute()
    items = cal.events().instances(calendarId="primary", eventId=series["id"]).execute()["items"]
    # DST starts March 8 in Los Angeles: 10:00 is 18:00Z before, 17:00Z after; the 16th is excluded, the 18th added
    assert [i["start"]["dateTime"] for i in items] == ["2026-03-02T18:00:00Z", "2026-03-09T17:00:00Z",
                                                       "2026-03-18T22:00:00Z", "2026-03-23T17:00:00Z",
                                                       "2026-03-30T17:00:00Z"]
    assert [i["id"] for i in items][:2] == [f"{series['id']}_20260302T180000Z", f"{series['id']}_20260309T170000Z"]
    assert all(i["recurringEventId"] == series["id"] and i["originalStartTime"] == i["start"] for i in items)
    local = cal.events().instances(calendarId="primary", eventId=series["id"], timeZone=LA,
                                   timeMin="2026-03-01T00:00:00Z", timeMax="2026-03-12T00:00:00Z").execute()["items"]
    assert [i["start"]["dateTime"] for i in local] == ["2026-03-02T10:00:00-08:00", "2026-03-09T10:00:00-07:00"]
    single = cal.events().list(calendarId="primary", singleEvents=True, orderBy="startTime", q="Quokka",
                               timeMin="2026-03-05T00:00:00Z", timeMax="2026-03-25T00:00:00Z").execute()["items"]
    assert [i["start"]["dateTime"] for i in single] == ["2026-03-09T17:00:00Z", "2026-03-18T22:00:00Z",
                                                        "2026-03-23T17:00:00Z"]
    masters = cal.events().list(calendarId="primary", q="Quokka", timeMin="2026-03-20T00:00:00Z").execute()["items"]
    assert [m["id"] for m in masters] == [series["id"]]  # the series is listed where an occurrence falls in range
    busy = cal.freebusy().query(body={"timeMin": "2026-03-23T00:00:00Z", "timeMax": "2026-03-24T00:00:00Z",
                                      "timeZone": LA, "items": [{"id": "primary"}]}).execute()["calendars"]["primary"]
    assert {"start": "2026-03-23T10:00:00-07:00", "end": "2026-03-23T10:30:00-07:00"} in busy["busy"]
    assert status_of(cal.events().insert(calendarId="primary", body={**body, "recurrence": ["RRULE:FREQ=SOMETIMES"]})) \
        == (400, "invalid")


def test_one_occurrence_is_read_moved_and_cancelled_by_its_id(server, cal):
    sec = cal.calendars().insert(body={"summary": "Team", "timeZone": LA}).execute()["id"]  # busy with this series only
    series = cal.events().insert(calendarId=sec, body=local_event(
        "2026-03-02", "10:00:00", "10:30:00", LA, summary="Wombat sync", recurrence=["RRULE:FREQ=WEEKLY;COUNT=5"])).execute()
    sid = series["id"]
    third, fourth = f"{sid}_20260316T170000Z", f"{sid}_20260323T170000Z"
    got = cal.events().get(calendarId=sec, eventId=third, timeZone=LA).execute()
    assert (got["id"], got["recurringEventId"], got["start"]["dateTime"]) == (third, sid, "2026-03-16T10:00:00-07:00")
    moved = cal.events().patch(calendarId=sec, eventId=third, body={
        "summary": "Wombat sync (moved)", "start": {"dateTime": "2026-03-17T14:00:00"},
        "end": {"dateTime": "2026-03-17T14:30:00"}}).execute()
    assert moved["start"] == {"dateTime": "2026-03-17T14:00:00-07:00", "timeZone": LA}  # in the occurrence's zone
    assert moved["originalStartTime"] == {"dateTime": "2026-03-16T10:00:00-07:00", "timeZone": LA}
    assert ws(server).calendar.db.events[sid].exceptions["20260316T170000Z"].start["dateTime"] == "2026-03-17T21:00:00Z"
    cal.events().delete(calendarId=sec, eventId=fourth).execute()
    row = ws(server).calendar.db.events[sid]  # the exceptions are kept on the series
    assert set(row.exceptions) == {"20260316T170000Z", "20260323T170000Z"} and row.summary == "Wombat sync"
    assert row.exceptions["20260323T170000Z"].status == "cancelled"
    items = cal.events().instances(calendarId=sec, eventId=sid).execute()["items"]
    assert [(i["summary"], i["start"]["dateTime"]) for i in items] == [
        ("Wombat sync", "2026-03-02T10:00:00-08:00"), ("Wombat sync", "2026-03-09T10:00:00-07:00"),
        ("Wombat sync (moved)", "2026-03-17T14:00:00-07:00"), ("Wombat sync", "2026-03-30T10:00:00-07:00")]
    with_deleted = cal.events().instances(calendarId=sec, eventId=sid, showDeleted=True).execute()["items"]
    assert [i["status"] for i in with_deleted if i["id"] == fourth] == ["cancelled"]
    single = cal.events().list(calendarId=sec, singleEvents=True, q="Wombat",
                               timeMin="2026-03-15T00:00:00Z", timeMax="2026-03-31T00:00:00Z").execute()["items"]
    assert [(i["id"], i["originalStartTime"]["dateTime"]) for i in single] == [
        (third, "2026-03-16T10:00:00-07:00"), (f"{sid}_20260330T170000Z", "2026-03-30T10:00:00-07:00")]
    # without singleEvents: the series, its moved occurrence, and its cancelled one (Calendar lists those too)
    listed = cal.events().list(calendarId=sec, q="Wombat", timeMin="2026-03-15T00:00:00Z").execute()["items"]
    assert [(i["id"], i["status"]) for i in listed] == [(sid, "confirmed"), (third, "confirmed"), (fourth, "cancelled")]
    assert cal.events().get(calendarId=sec, eventId=fourth).execute()["status"] == "cancelled"
    assert status_of(cal.events().delete(calendarId=sec, eventId=fourth)) == (410, "deleted")
    assert status_of(cal.events().get(calendarId=sec, eventId=f"{sid}_20260317T170000Z")) == (404, "notFound")
    busy = cal.freebusy().query(body={"timeMin": "2026-03-16T00:00:00Z", "timeMax": "2026-03-18T00:00:00Z",
                                      "items": [{"id": sec}]}).execute()["calendars"][sec]["busy"]
    assert busy == [{"start": "2026-03-17T21:00:00Z", "end": "2026-03-17T21:30:00Z"}]  # moved, not where it was
    cal.events().patch(calendarId=sec, eventId=sid, body={"recurrence": ["RRULE:FREQ=WEEKLY;COUNT=6"]}).execute()
    assert ws(server).calendar.db.events[sid].exceptions is None  # a new rule starts the series afresh


def test_freebusy_answers_under_the_ids_asked(server, cal):
    someone = ws(server).directory[3].email
    got = cal.freebusy().query(body={"timeMin": "2026-03-09T00:00:00Z", "timeMax": "2026-03-14T00:00:00Z",
                                     "items": [{"id": "primary"}, {"id": someone}, {"id": "nobody@nowhere.example"}]}
                               ).execute()["calendars"]
    assert list(got) == ["primary", someone, "nobody@nowhere.example"]
    assert got["primary"]["busy"] and got[someone]["busy"]
    assert got["nobody@nowhere.example"]["errors"] == [{"domain": "global", "reason": "notFound"}]


def test_a_full_sync_then_an_incremental_one_sees_a_change_and_a_deletion(server, cal):
    events, token, pages, req = [], None, 0, cal.events().list(calendarId="primary", maxResults=20)
    while req is not None:
        page = req.execute()
        pages += 1
        assert ("nextSyncToken" in page) == ("nextPageToken" not in page)  # the token comes on the last page only
        events += page["items"]
        token = page.get("nextSyncToken", token)
        req = cal.events().list_next(req, page)
    assert pages > 1 and token
    before = {e["id"] for e in events}
    made = cal.events().insert(calendarId="primary", body=local_event("2026-03-18", "09:00:00", "09:30:00", NY)).execute()
    changed, gone = events[0]["id"], events[1]["id"]
    cal.events().patch(calendarId="primary", eventId=changed, body={"summary": "Renamed"}).execute()
    cal.events().delete(calendarId="primary", eventId=gone).execute()
    inc = cal.events().list(calendarId="primary", syncToken=token).execute()
    assert {(i["id"], i["status"]) for i in inc["items"]} == {(made["id"], "confirmed"), (changed, "confirmed"),
                                                              (gone, "cancelled")}
    assert made["id"] not in before and inc["nextSyncToken"] != token
    assert cal.events().list(calendarId="primary", syncToken=inc["nextSyncToken"]).execute()["items"] == []
    assert status_of(cal.events().list(calendarId="primary", syncToken="not-a-token")) == (410, "fullSyncRequired")
    sec = cal.calendars().insert(body={"summary": "Elsewhere"}).execute()["id"]
    assert status_of(cal.events().list(calendarId=sec, syncToken=token)) == (410, "fullSyncRequired")  # another calendar's
    assert status_of(cal.events().list(calendarId="primary", syncToken=token, timeMin="2026-03-01T00:00:00Z")) \
        == (400, "invalid")
