"""Calendar time in-process: recurrence forms (all-day series, UTC and local EXDATE / UNTIL, RDATE-only), refused
rules, a changed occurrence in an incremental sync, the frozen clock's determinism and exact snapshot/restore with
exceptions and sync state, and env0's surface reading an offset-less time as env0 does."""

from __future__ import annotations

import json

import pytest

from env0_posttrain.tasks.env0.serve.server import _local_times
from env0_posttrain.workspace.services.calendar.env0_shape import calendar_state
from env0_posttrain.workspace import Workspace
from env0_posttrain_tests.support.workspace import err, ok

LA = "America/Los_Angeles"


@pytest.fixture()
def ws():
    return Workspace.seeded(7)


def series(ws, recurrence, start="2026-03-02T10:00:00", end="2026-03-02T10:30:00", tz=LA, summary="Capybara sync"):
    times = {"start": {"dateTime": start, "timeZone": tz}, "end": {"dateTime": end, "timeZone": tz}} if tz else \
        {"start": {"date": start}, "end": {"date": end}}
    return ok(ws, "calendar_events_insert", {"body": {"summary": summary, "recurrence": recurrence, **times}})


def starts(ws, event_id, **kw):
    return [i["start"].get("dateTime") or i["start"]["date"]
            for i in ok(ws, "calendar_events_instances", {"eventId": event_id, **kw})["items"]]


def test_recurrence_forms(ws):
    allday = series(ws, ["RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE;VALUE=DATE:20260309"], "2026-03-02", "2026-03-03", None)
    assert starts(ws, allday["id"]) == ["2026-03-02", "2026-03-16"]
    assert ok(ws, "calendar_events_get", {"eventId": f"{allday['id']}_20260316"})["start"] == {"date": "2026-03-16"}
    utc_ex = series(ws, ["RRULE:FREQ=DAILY;UNTIL=20260305T180000Z", "EXDATE:20260303T180000Z"])
    assert starts(ws, utc_ex["id"]) == ["2026-03-02T18:00:00Z", "2026-03-04T18:00:00Z", "2026-03-05T18:00:00Z"]
    local_until = series(ws, ["RRULE:FREQ=WEEKLY;UNTIL=20260316T100000"])  # a local UNTIL, on the DST side
    assert starts(ws, local_until["id"], timeZone=LA) == ["2026-03-02T10:00:00-08:00", "2026-03-09T10:00:00-07:00",
                                                           "2026-03-16T10:00:00-07:00"]
    only_dates = series(ws, ["RDATE;TZID=America/Los_Angeles:20260310T090000,20260311T090000"])
    assert starts(ws, only_dates["id"]) == ["2026-03-02T18:00:00Z", "2026-03-10T16:00:00Z", "2026-03-11T16:00:00Z"]
    for bad in (["FREQ=WEEKLY"], ["RRULE:FREQ=WEEKLY;BYDAY=XX"], ["EXDATE:yesterday"], ["RRULE:FREQ=DAILY", 7]):
        assert err(ws, "calendar_events_insert", {"body": {
            "summary": "x", "recurrence": bad, "start": {"dateTime": "2026-03-02T10:00:00Z"},
            "end": {"dateTime": "2026-03-02T11:00:00Z"}}})["errors"][0]["reason"] == "invalid", bad
    cal = ok(ws, "calendar_calendars_insert", {"body": {"summary": "Tokyo desk", "timeZone": "Asia/Tokyo"}})
    zoneless = ok(ws, "calendar_events_insert", {"calendarId": cal["id"], "body": {  # expanded in its calendar's zone
        "summary": "x", "recurrence": ["RRULE:FREQ=DAILY;COUNT=2"], "start": {"dateTime": "2026-03-02T00:30:00Z"},
        "end": {"dateTime": "2026-03-02T01:00:00Z"}}})
    assert starts(ws, zoneless["id"], calendarId=cal["id"]) == ["2026-03-02T09:30:00+09:00", "2026-03-03T09:30:00+09:00"]
    planted = ws.calendar.db.events[utc_ex["id"]]  # a seeder's row with a rule that does not read: its first occurrence
    ws.calendar.db.events[planted.id] = planted.model_copy(update={"recurrence": ("RRULE:FREQ=NEVER",)})
    assert starts(ws, planted.id) == ["2026-03-02T18:00:00Z"]


def test_a_changed_occurrence_comes_back_in_an_incremental_sync(ws):
    made = series(ws, ["RRULE:FREQ=WEEKLY;COUNT=3"])
    token = ok(ws, "calendar_events_list", {"maxResults": 2500})["nextSyncToken"]
    one = f"{made['id']}_20260309T170000Z"
    ok(ws, "calendar_events_patch", {"eventId": one, "body": {"location": "Room 9"}})
    got = ok(ws, "calendar_events_list", {"syncToken": token})["items"]
    assert [(i["id"], i["recurringEventId"], i["location"]) for i in got] == [(one, made["id"], "Room 9")]
    single = ok(ws, "calendar_events_list", {"syncToken": token, "singleEvents": True})["items"]
    assert [i["id"] for i in single] == [one]
    assert err(ws, "calendar_events_list", {"syncToken": token, "showDeleted": False})["errors"][0]["reason"] == "invalid"
    assert "nextSyncToken" not in ok(ws, "calendar_events_list", {"q": "Capybara"})


def _session(ws):
    made = series(ws, ["RRULE:FREQ=WEEKLY;COUNT=4"])
    ok(ws, "calendar_events_patch", {"eventId": f"{made['id']}_20260316T170000Z", "body": {"summary": "moved"}})
    ok(ws, "calendar_events_delete", {"eventId": f"{made['id']}_20260323T170000Z"})
    return ok(ws, "calendar_events_list", {"maxResults": 2500})["nextSyncToken"]


def test_the_frozen_clock_gives_the_same_ids_tokens_and_state_and_restore_is_exact(ws):
    other = Workspace.seeded(7)
    ws.snapshot("before")
    before = ws.state_hash()
    assert _session(ws) == _session(other) and ws.state_hash() == other.state_hash() != before
    ws.snapshot("after")
    after = ws.state_hash()
    ws.restore("before")
    assert ws.state_hash() == before
    ws.restore("after")
    assert ws.state_hash() == after
    assert len(ws.calendar.db.events[next(e.id for e in ws.calendar.series())].exceptions) == 2


def test_env0s_surface_reads_an_offset_less_time_as_utc_and_its_state_gives_back_the_hour_written(ws):
    body = {"summary": "Okapi review", "start": {"dateTime": "2026-03-20T15:00:00", "timeZone": LA},
            "end": {"dateTime": "2026-03-20T16:00:00"}, "originalStartTime": {"dateTime": "2026-03-20T15:00:00-07:00"}}
    got = json.loads(_local_times(json.dumps(body).encode()))
    assert got["start"] == {"dateTime": "2026-03-20T15:00:00Z", "timeZone": LA}
    assert got["end"] == {"dateTime": "2026-03-20T16:00:00Z"}
    assert got["originalStartTime"] == body["originalStartTime"]
    assert _local_times(b"not json") == b"not json"
    del got["originalStartTime"]
    ok(ws, "calendar_events_insert", {"body": got})
    offset = ok(ws, "calendar_events_insert", {"body": {"summary": "Okapi sync", "start": {
        "dateTime": "2026-03-20T09:00:00-07:00"}, "end": {"dateTime": "2026-03-20T10:00:00-07:00"}}})
    state = {e["summary"]: e for e in calendar_state(ws)["users"]["user1"]["events"]}
    assert state["Okapi review"]["start"] == "2026-03-20T15:00:00"  # env0 dumps naive UTC
    assert state["Okapi sync"]["start"] == "2026-03-20T16:00:00" and offset["start"]["dateTime"] == "2026-03-20T16:00:00Z"
