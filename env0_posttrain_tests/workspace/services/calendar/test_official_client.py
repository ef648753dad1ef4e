"""google-api-python-client (packaged discovery document) drives every Calendar v3 method the workspace serves
beyond events/freebusy: calendars, calendarList, acl, events update/import/quickAdd/instances, settings,
colors, watch channels. Each request goes over HTTP to the live app."""

from __future__ import annotations

import pytest

from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws
from env0_posttrain_tests.support.google_clients import reseeded_service, status_of

pytestmark = pytest.mark.filterwarnings("ignore")
WHEN = {"start": {"dateTime": "2026-03-16T09:00:00Z"}, "end": {"dateTime": "2026-03-16T09:30:00Z"}}


server = tls_server_fixture()


@pytest.fixture()
def cal(server):
    return reseeded_service(server[0], "calendar", "v3", "calendar/v3/")


def test_calendars_crud_and_clear(server, cal):
    made = cal.calendars().insert(body={"summary": "Offsite", "timeZone": "Europe/Paris"}).execute()
    cid = made["id"]
    assert made["kind"] == "calendar#calendar" and cid.endswith("@group.calendar.google.com")
    assert made["dataOwner"] == ws(server).me.email
    assert cal.calendars().get(calendarId=cid).execute()["timeZone"] == "Europe/Paris"
    assert cal.calendars().patch(calendarId=cid, body={"description": "Q2"}).execute()["description"] == "Q2"
    put = cal.calendars().update(calendarId=cid, body={"summary": "Offsite 2026"}).execute()
    assert put["summary"] == "Offsite 2026" and "description" not in put  # update replaces the resource
    assert status_of(cal.calendars().update(calendarId=cid, body={"description": "no title"})) == (400, "required")
    ev = cal.events().insert(calendarId=cid, body={"summary": "Kickoff", **WHEN}).execute()
    assert status_of(cal.calendars().clear(calendarId=cid)) == (400, "invalid")  # only the primary can be cleared
    cal.calendars().delete(calendarId=cid).execute()
    assert cid not in ws(server).calendar.db.calendars and ev["id"] not in ws(server).calendar.db.events
    assert status_of(cal.calendars().get(calendarId=cid)) == (404, "notFound")
    assert status_of(cal.calendars().delete(calendarId="primary")) == (400, "invalid")
    mine = cal.events().insert(calendarId="primary", body={"summary": "Mine", **WHEN}).execute()
    cal.calendars().clear(calendarId="primary").execute()
    assert ws(server).calendar.db.events[mine["id"]].status == "cancelled"
    holidays = next(c for c in ws(server).calendar.db.calendars.values() if c.summary == "Company Holidays")
    assert status_of(cal.calendars().patch(calendarId=holidays.id, body={"summary": "x"})) == (403, "requiredAccessLevel")


def test_calendar_list_entries(server, cal):
    items = cal.calendarList().list().execute()["items"]
    holidays = next(i for i in items if i["summary"] == "Company Holidays")
    assert items[0]["primary"] is True and holidays["accessRole"] == "reader"
    got = cal.calendarList().patch(calendarId=holidays["id"], body={"colorId": "7", "summaryOverride": "Days off"}).execute()
    assert (got["colorId"], got["summaryOverride"]) == ("7", "Days off")
    rgb = cal.calendarList().update(calendarId=holidays["id"], colorRgbFormat=True,
                                    body={"backgroundColor": "#112233", "foregroundColor": "#ffffff"}).execute()
    assert rgb["backgroundColor"] == "#112233" and "summaryOverride" not in rgb
    assert status_of(cal.calendarList().patch(calendarId=holidays["id"], body={"backgroundColor": "#112233"})) \
        == (400, "invalid")
    cal.calendarList().delete(calendarId=holidays["id"]).execute()
    assert holidays["id"] not in [i["id"] for i in cal.calendarList().list().execute()["items"]]
    assert status_of(cal.calendarList().get(calendarId=holidays["id"])) == (404, "notFound")
    back = cal.calendarList().insert(body={"id": holidays["id"], "hidden": True}).execute()
    assert back["hidden"] is True
    assert holidays["id"] not in [i["id"] for i in cal.calendarList().list().execute()["items"]]
    assert holidays["id"] in [i["id"] for i in cal.calendarList().list(showHidden=True).execute()["items"]]
    assert [i["accessRole"] for i in cal.calendarList().list(minAccessRole="owner").execute()["items"]] == ["owner"]
    assert status_of(cal.calendarList().delete(calendarId="primary")) == (400, "invalid")
    someone = ws(server).directory[4].email  # free/busy access only: not listable
    assert status_of(cal.calendarList().insert(body={"id": someone})) == (404, "notFound")


def test_acl_share_change_and_unshare(server, cal):
    seeded = {r.scopeValue for r in ws(server).calendar.db.acl.values()}
    guest = next(p.email for p in ws(server).directory[1:] if p.email not in seeded)
    rule = cal.acl().insert(calendarId="primary", sendNotifications=False,
                            body={"role": "reader", "scope": {"type": "user", "value": guest}}).execute()
    assert rule == {**rule, "id": f"user:{guest}", "role": "reader", "scope": {"type": "user", "value": guest}}
    assert cal.acl().get(calendarId="primary", ruleId=rule["id"]).execute()["role"] == "reader"
    assert cal.acl().patch(calendarId="primary", ruleId=rule["id"], body={"role": "writer"}).execute()["role"] == "writer"
    assert cal.acl().update(calendarId="primary", ruleId=rule["id"],
                            body={"role": "freeBusyReader", "scope": {"type": "user", "value": guest}}).execute()["role"] \
        == "freeBusyReader"
    cal.acl().insert(calendarId="primary", body={"role": "freeBusyReader", "scope": {"type": "default"}}).execute()
    ids = [r["id"] for r in cal.acl().list(calendarId="primary").execute()["items"]]
    me = ws(server).me.email
    assert ids[0] == f"user:{me}" and {"default", f"user:{guest}", f"domain:{ws(server).domain}"} <= set(ids[1:])
    assert ids[1:] == sorted(ids[1:])
    assert [r.id for r in ws(server).calendar.acl_of("primary")] == ids  # verifier helper
    cal.acl().delete(calendarId="primary", ruleId=rule["id"]).execute()
    assert status_of(cal.acl().get(calendarId="primary", ruleId=rule["id"])) == (404, "notFound")
    assert status_of(cal.acl().delete(calendarId="primary", ruleId=f"user:{me}")) == (403, "cannotChangeOwnAcl")
    assert status_of(cal.acl().insert(calendarId="primary", body={"role": "boss", "scope": {"type": "user", "value": guest}})) \
        == (400, "invalid")
    assert status_of(cal.acl().insert(calendarId="primary", body={"role": "reader", "scope": {"type": "user"}})) \
        == (400, "required")
    holidays = next(c for c in ws(server).calendar.db.calendars.values() if c.summary == "Company Holidays")
    assert status_of(cal.acl().list(calendarId=holidays.id)) == (403, "requiredAccessLevel")


def test_events_update_import_quickadd_instances(server, cal):
    guest = ws(server).directory[6].email
    ev = cal.events().insert(calendarId="primary", body={"summary": "Sync", "location": "Room 1", **WHEN,
                                                         "attendees": [{"email": guest}]}).execute()
    put = cal.events().update(calendarId="primary", eventId=ev["id"], body={
        "summary": "Sync (moved)", "start": {"dateTime": "2026-03-17T09:00:00Z"},
        "end": {"dateTime": "2026-03-17T10:00:00Z"}, "colorId": "5"}).execute()
    assert put["summary"] == "Sync (moved)" and "location" not in put and "attendees" not in put
    assert put["colorId"] == "5" and put["sequence"] == 1
    assert status_of(cal.events().update(calendarId="primary", eventId=ev["id"], body={"summary": "x"})) == (400, "required")
    imp = cal.events().import_(calendarId="primary", body={"iCalUID": "abc123@partner.example", "summary": "Partner call",
                                                           "organizer": {"email": "pat@partner.example"}, **WHEN}).execute()
    assert imp["iCalUID"] == "abc123@partner.example" and imp["organizer"]["email"] == "pat@partner.example"
    again = cal.events().import_(calendarId="primary", body={"iCalUID": "abc123@partner.example", "summary": "Partner call v2",
                                                             **WHEN}).execute()
    assert again["id"] == imp["id"] and again["summary"] == "Partner call v2"  # re-import updates the copy
    assert status_of(cal.events().import_(calendarId="primary", body={"summary": "no uid", **WHEN})) == (400, "required")
    quick = cal.events().quickAdd(calendarId="primary", text="Lunch with Ann tomorrow 12pm-1:30pm").execute()
    assert quick["summary"] == "Lunch with Ann"
    assert (quick["start"]["dateTime"], quick["end"]["dateTime"]) == ("2026-03-12T12:00:00Z", "2026-03-12T13:30:00Z")
    allday = cal.events().quickAdd(calendarId="primary", text="Dentist on Friday").execute()
    assert allday["start"] == {"date": "2026-03-13"} and allday["summary"] == "Dentist"
    weekly = cal.events().insert(calendarId="primary", body={"summary": "1:1", **WHEN,
                                                             "recurrence": ["RRULE:FREQ=WEEKLY;COUNT=4"]}).execute()
    inst = cal.events().instances(calendarId="primary", eventId=weekly["id"], timeMin="2026-03-20T00:00:00Z").execute()
    assert [i["start"]["dateTime"] for i in inst["items"]] == ["2026-03-23T09:00:00Z", "2026-03-30T09:00:00Z",
                                                                "2026-04-06T09:00:00Z"]
    assert {i["recurringEventId"] for i in inst["items"]} == {weekly["id"]}
    one = cal.events().instances(calendarId="primary", eventId=ev["id"]).execute()["items"]
    assert [i["id"] for i in one] == [ev["id"]]


def test_move_to_secondary_settings_colors_and_channels(server, cal):
    sec = cal.calendars().insert(body={"summary": "Side project"}).execute()["id"]
    ev = cal.events().insert(calendarId="primary", body={"summary": "Hack night", **WHEN}).execute()
    moved = cal.events().move(calendarId="primary", eventId=ev["id"], destination=sec).execute()
    assert moved["organizer"]["email"] == sec
    assert [i["id"] for i in cal.events().list(calendarId=sec).execute()["items"]] == [ev["id"]]
    settings = {s["id"]: s["value"] for s in cal.settings().list().execute()["items"]}
    assert settings["timezone"] == "UTC" and cal.settings().get(setting="weekStart").execute()["value"] == "0"
    assert status_of(cal.settings().get(setting="nope")) == (404, "notFound")
    colors = cal.colors().get().execute()
    assert len(colors["calendar"]) == 24 and len(colors["event"]) == 11
    ch = cal.events().watch(calendarId="primary", body={"id": "ch-1", "type": "web_hook",
                                                        "address": "https://hooks.example.com/cal"}).execute()
    assert ch["kind"] == "api#channel" and ch["resourceId"]
    assert status_of(cal.calendarList().watch(body={"id": "ch-1", "type": "web_hook",
                                                    "address": "https://hooks.example.com/cal"}))[0] == 400
    cal.settings().watch(body={"id": "ch-2", "type": "web_hook", "address": "https://hooks.example.com/s"}).execute()
    cal.acl().watch(calendarId="primary", body={"id": "ch-3", "type": "web_hook",
                                                "address": "https://hooks.example.com/a"}).execute()
    cal.channels().stop(body={"id": "ch-1", "resourceId": ch["resourceId"]}).execute()
    assert set(ws(server).calendar.db.channels) == {"ch-2", "ch-3"}
    assert status_of(cal.channels().stop(body={"id": "ch-1", "resourceId": ch["resourceId"]})) == (404, "notFound")


def test_every_calendar_v3_method_but_transfer_ownership_is_a_tool():
    import json
    from pathlib import Path

    import googleapiclient

    from env0_posttrain.workspace import TOOLS

    doc = json.loads((Path(googleapiclient.__file__).parent / "discovery_cache/documents/calendar.v3.json").read_text())
    real = {m["id"] for r in doc["resources"].values() for m in r.get("methods", {}).values()}
    served = {s.method_id for s in TOOLS.values() if s.service == "calendar"}
    assert real - served == {"calendar.calendars.transferOwnership"} and served <= real
