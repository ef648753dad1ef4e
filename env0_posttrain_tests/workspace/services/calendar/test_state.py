"""Calendar's calendar list, ACL rules, settings and channels are workspace state like events: seeded,
snapshotted, restored, diffed, logged, stamped with the frozen clock, and readable by verifiers."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from env0_posttrain.workspace import Workspace
from env0_posttrain.workspace.services.calendar.quick_add import parse_quick
from env0_posttrain_tests.support.workspace import err, ok


@pytest.fixture()
def ws():
    return Workspace.seeded(3)


def test_seeded_state_has_my_list_entries_and_settings(ws):
    c = ws.calendar.db
    assert ws.me.email in c.calendarList and c.settings["timezone"].value == "UTC"
    holidays = next(x for x in c.calendars.values() if x.summary == "Company Holidays")
    assert holidays.id in c.calendarList  # a calendar shared with me is in my list
    assert not c.channels
    rules = {r.id: r.role for r in ws.calendar.acl_of("primary")}  # seeded sharing of my primary calendar
    assert rules[f"user:{ws.me.email}"] == "owner" and rules[f"domain:{ws.domain}"] == "freeBusyReader"
    assert sorted(rules.values()) == ["freeBusyReader", "owner", "reader"]
    assert ws.state()["calendar"]["settings"]["weekStart"] == {"id": "weekStart", "value": "0"}


def test_new_state_is_snapshotted_restored_diffed_and_logged(ws):
    h0 = ws.state_hash()
    ws.snapshot("start")
    guest = ws.directory[2].email
    cid = ok(ws, "calendar_calendars_insert", {"body": {"summary": "Launch"}})["id"]
    ok(ws, "calendar_acl_insert", {"calendarId": cid, "body": {"role": "writer", "scope": {"type": "user", "value": guest}}})
    ok(ws, "calendar_calendarList_patch", {"calendarId": "primary", "body": {"colorId": "3"}})
    ok(ws, "calendar_events_watch", {"body": {"id": "c1", "type": "web_hook", "address": "https://h.example.com"}})
    d = ws.diff("start")["calendar"]
    assert set(d["calendars"]["added"]) == {cid}
    assert set(d["acl"]["added"]) == {f"{cid}/user:{guest}"}
    assert set(d["calendarList"]["added"]) == {cid}
    assert d["calendarList"]["updated"][ws.me.email]["after"]["colorId"] == "3"
    assert set(d["channels"]["added"]) == {"c1"}
    tools = [e["tool"] for e in ws.log("calendar")]
    assert tools == ["calendar_calendars_insert", "calendar_acl_insert", "calendar_calendarList_patch",
                     "calendar_events_watch"]
    assert ws.calendar.acl_of(cid)[1].role == "writer"  # verifier helper
    ws.restore("start")
    assert ws.state_hash() == h0 and not ws.diff("start")


def test_failed_write_leaves_acl_and_list_untouched(ws):
    h0 = ws.state_hash()
    assert err(ws, "calendar_acl_insert", {"calendarId": "primary", "body": {"role": "reader",
                                                                             "scope": {"type": "user", "value": "bad"}}})
    assert err(ws, "calendar_calendarList_insert", {"body": {"id": "nobody@nowhere.example"}})
    assert ws.state_hash() == h0


def test_seeding_helpers_and_frozen_clock(ws):
    cal = ws.calendar.add_calendar(summary="Team", owner=ws.me.email)
    ws.calendar.add_acl(cal.id, role="reader", value=ws.directory[5].email)
    ws.calendar.set_setting("timezone", "Europe/Berlin")
    assert [r["id"] for r in ok(ws, "calendar_acl_list", {"calendarId": cal.id})["items"]] == \
        [f"user:{ws.me.email}", f"user:{ws.directory[5].email}"]
    made = ok(ws, "calendar_calendars_insert", {"body": {"summary": "Defaults"}})
    assert made["timeZone"] == "Europe/Berlin"  # a new calendar takes the user's timezone setting
    q = ok(ws, "calendar_events_quickAdd", {"text": "Retro 3pm"})
    assert q["created"] == ws.now_rfc3339() == "2026-03-11T16:00:00.000Z"
    assert q["start"]["dateTime"] == "2026-03-11T15:00:00Z"
    d = ws.diff()["calendar"]  # rules and settings planted before the first call are the task's baseline
    assert "acl" not in d and "settings" not in d and set(d["calendars"]["added"]) == {made["id"]}


@pytest.mark.parametrize("text,summary,start,end,all_day", [
    ("Lunch with Ann tomorrow 12pm-1pm", "Lunch with Ann", "2026-03-12T12:00", "2026-03-12T13:00", False),
    ("Standup at 9:30am", "Standup", "2026-03-11T09:30", "2026-03-11T10:30", False),
    ("Dentist on Friday", "Dentist", "2026-03-13T00:00", "2026-03-14T00:00", True),
    ("Launch party March 20 6pm-9pm", "Launch party", "2026-03-20T18:00", "2026-03-20T21:00", False),
    ("Call Bob 2-3pm", "Call Bob", "2026-03-11T14:00", "2026-03-11T15:00", False),
    ("Review 11-2pm", "Review", "2026-03-11T11:00", "2026-03-11T14:00", False),
    ("Just some words", "Just some words", "2026-03-11T00:00", "2026-03-12T00:00", True),
])
def test_quick_add_parsing(text, summary, start, end, all_day):
    now = datetime(2026, 3, 11, 16, tzinfo=timezone.utc)
    got = parse_quick(text, now)
    assert (got[0], got[1].strftime("%Y-%m-%dT%H:%M"), got[2].strftime("%Y-%m-%dT%H:%M"), got[3]) == \
        (summary, start, end, all_day)
