"""Calendar, Drive and Docs: access rules, the Drive q grammar, Docs indexes, and the links between them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from env0_posttrain.workspace import Workspace
from env0_posttrain.workspace.services.drive.data_model import GDOC
from env0_posttrain_tests.support.workspace import err, ok


@pytest.fixture()
def ws():
    return Workspace.seeded(21)


# -- calendar -----------------------------------------------------------------------------------------------
def test_invited_event_shows_on_my_calendar_and_only_my_response_can_change(ws):
    boss = ws.directory[0]
    start = (ws.now + timedelta(days=40)).replace(hour=3, minute=0)  # a slot no seeded event uses
    ev = ws.calendar.add_event(summary="Board prep", start=start, end=start + timedelta(hours=1), organizer=boss.email,
                               attendees=[boss.email, ws.me.email])
    got = ok(ws, "calendar_events_get", {"eventId": ev.id})
    assert got["organizer"]["email"] == boss.email and "self" not in got["organizer"]
    assert err(ws, "calendar_events_patch", {"eventId": ev.id, "body": {"summary": "x"}})["errors"][0]["reason"] \
        == "forbiddenForNonOrganizer"
    ok(ws, "calendar_events_patch", {"eventId": ev.id, "body": {"attendees": [{"email": ws.me.email,
                                                                                 "responseStatus": "accepted"}]}})
    assert next(a for a in ws.calendar.db.events[ev.id].attendees if a.email == ws.me.email).responseStatus == "accepted"
    window = {"timeMin": start.isoformat(), "timeMax": (start + timedelta(hours=2)).isoformat(),
              "items": [{"id": ws.me.email}, {"id": boss.email}]}
    slot = [{"start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
             "end": (start + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}]
    assert ok(ws, "calendar_freebusy_query", {"body": window})["calendars"][ws.me.email]["busy"] == slot
    ok(ws, "calendar_events_delete", {"eventId": ev.id})  # an attendee "deleting" declines
    assert ws.calendar.db.events[ev.id].status == "confirmed"
    cals = ok(ws, "calendar_freebusy_query", {"body": window})["calendars"]
    assert cals[ws.me.email]["busy"] == [] and cals[boss.email]["busy"] == slot


def test_colleague_calendar_is_free_busy_only(ws):
    other = ws.directory[6].email
    assert err(ws, "calendar_events_list", {"calendarId": other})["code"] == 404
    fb = ok(ws, "calendar_freebusy_query", {"body": {"timeMin": "2026-03-09T00:00:00Z", "timeMax": "2026-03-20T00:00:00Z",
                                                     "items": [{"id": other}]}})
    spans = fb["calendars"][other]["busy"]
    assert all(a["end"] <= b["start"] for a, b in zip(spans, spans[1:]))  # merged, sorted


def test_events_list_window_order_and_paging(ws):
    args = {"timeMin": "2026-03-09T00:00:00Z", "timeMax": "2026-03-21T00:00:00Z", "singleEvents": True,
            "orderBy": "startTime", "maxResults": 5}
    page1 = ok(ws, "calendar_events_list", args)
    page2 = ok(ws, "calendar_events_list", {**args, "pageToken": page1["nextPageToken"]})
    starts = [e["start"]["dateTime"] for e in page1["items"] + page2["items"]]
    assert starts == sorted(starts) and len(starts) == 10
    ins = ok(ws, "calendar_events_insert", {"body": {"summary": "x", "start": {"date": "2026-03-20"},
                                                      "end": {"date": "2026-03-21"}}})
    assert ins["start"] == {"date": "2026-03-20"}
    moved = ok(ws, "calendar_events_patch", {"eventId": ins["id"], "body": {
        "start": {"dateTime": "2026-03-20T09:00:00Z"}, "end": {"dateTime": "2026-03-20T09:30:00Z"}}})
    assert moved["sequence"] == 1


def test_event_times_are_memoised_per_row_and_a_moved_event_is_seen_at_its_new_time(ws):
    from env0_posttrain.workspace.services.calendar.times import event_time
    from env0_posttrain.workspace.services.calendar.state import event_times

    for e in ws.calendar.db.events.values():
        assert event_times(e) == (event_time(e.start, "start"), event_time(e.end, "end"))
    other = Workspace.seeded(21)  # shares the seeded rows, so it shares their memo
    assert [r[:2] for r in other.calendar.timeline()] == [r[:2] for r in ws.calendar.timeline()]
    ins = ok(ws, "calendar_events_insert", {"body": {"summary": "memo", "start": {"dateTime": "2026-03-20T09:00:00Z"},
                                                      "end": {"dateTime": "2026-03-20T10:00:00Z"}}})
    before = {e.id: s for s, _, e in ws.calendar.timeline()}[ins["id"]]
    ok(ws, "calendar_events_patch", {"eventId": ins["id"], "body": {
        "start": {"dateTime": "2026-03-22T09:00:00Z"}, "end": {"dateTime": "2026-03-22T10:00:00Z"}}})
    after = {e.id: s for s, _, e in ws.calendar.timeline()}[ins["id"]]
    assert after - before == timedelta(days=2)
    assert ins["id"] not in {e.id for _, _, e in other.calendar.timeline()}


# -- drive --------------------------------------------------------------------------------------------------
def test_drive_q_grammar(ws):
    mine = ws.drive.add_file(name="Launch plan.txt", content="the launch is on friday")
    shared = ws.drive.add_file(name="Salary review.csv", content="x", owner=ws.directory[8].email,
                               shared_with={ws.me.email: "reader"})
    hidden = ws.drive.add_file(name="Secret plan.txt", content="x", owner=ws.directory[8].email)

    def names(q):
        return {f["name"] for f in ok(ws, "drive_files_list", {"q": q, "pageSize": 1000})["files"]}

    assert "Launch plan.txt" in names("name contains 'launch'")
    assert "Launch plan.txt" in names("fullText contains 'friday'")
    assert names("name = 'Salary review.csv' and sharedWithMe") == {"Salary review.csv"}
    assert "Secret plan.txt" not in names("name contains 'plan'")
    assert names(f"'{ws.directory[8].email}' in owners and name contains 'salary'") == {"Salary review.csv"}
    assert "Launch plan.txt" not in names("not name contains 'launch'")
    assert "Launch plan.txt" in names("(name contains 'zzz' or name contains 'launch') and trashed = false")
    assert names(f"'{ws.me.email}' in writers and name = 'Salary review.csv'") == set()
    assert "Launch plan.txt" in names("mimeType = 'text/plain' and modifiedTime > '2026-03-01T00:00:00'")
    for bad in ["name = ", "name ~ 'x'", "trashed = 'yes'", "'x' in nowhere", "((name = 'a')"]:
        assert err(ws, "drive_files_list", {"q": bad})["errors"][0]["location"] == "q"
    assert err(ws, "drive_files_get", {"fileId": hidden.id})["code"] == 404
    assert err(ws, "drive_files_update", {"fileId": shared.id, "body": {"name": "x"}})["code"] == 403
    assert mine.id


def test_drive_default_fields_media_and_trash(ws):
    f = ok(ws, "drive_files_create", {"body": {"name": "a.txt"}, "content": "alpha"})
    assert set(f) == {"kind", "id", "name", "mimeType"}
    assert ok(ws, "drive_files_get", {"fileId": f["id"], "alt": "media"}) == "alpha"
    full = ok(ws, "drive_files_get", {"fileId": f["id"], "fields": "*"})
    assert full["ownedByMe"] and full["parents"] == [ws.drive.root_id()]
    ok(ws, "drive_files_update", {"fileId": f["id"], "body": {"trashed": True}})
    listed = ok(ws, "drive_files_list", {"q": "name = 'a.txt' and trashed = false"})["files"]
    assert listed == []
    assert err(ws, "drive_files_update", {"fileId": f["id"], "body": {"owners": []}})["code"] == 400


def test_drive_sharing_and_revoking_public_links(ws):
    pub = ws.drive.add_file(name="Roadmap.txt", content="r", anyone="reader")
    perms = ok(ws, "drive_permissions_list", {"fileId": pub.id})["permissions"]
    anyone = next(p for p in perms if p["type"] == "anyone")
    ok(ws, "drive_permissions_delete", {"fileId": pub.id, "permissionId": anyone["id"]})
    assert [p.type for p in ws.drive.db.files[pub.id].permissions] == ["user"]
    assert err(ws, "drive_permissions_delete", {"fileId": pub.id, "permissionId": anyone["id"]})["code"] == 404
    mine = ok(ws, "drive_files_create", {"body": {"name": "b.txt"}, "content": "b"})
    owner = err(ws, "drive_permissions_create", {"fileId": mine["id"], "body": {"type": "user", "role": "owner",
                                                                               "emailAddress": ws.directory[2].email}})
    assert owner["code"] == 403
    p = ok(ws, "drive_permissions_create", {"fileId": mine["id"], "body": {"type": "domain", "role": "reader",
                                                                          "domain": ws.domain}})
    assert p == {"kind": "drive#permission", "id": p["id"], "type": "domain", "role": "reader"}
    own = next(x for x in ws.drive.db.files[mine["id"]].permissions if x.role == "owner")
    assert err(ws, "drive_permissions_delete", {"fileId": mine["id"], "permissionId": own.id})["code"] == 403


# -- docs ---------------------------------------------------------------------------------------------------
def test_docs_indexes_and_atomic_batch(ws):
    doc = ok(ws, "docs_documents_create", {"body": {"title": "Notes"}})
    did = doc["documentId"]
    assert ws.drive.db.files[did].mimeType == GDOC
    ok(ws, "docs_documents_batchUpdate", {"documentId": did, "body": {"requests": [
        {"insertText": {"location": {"index": 1}, "text": "Hello world\n"}},
        {"insertText": {"endOfSegmentLocation": {}, "text": "Tail"}}]}})
    assert ws.docs.text_of(did) == "Hello world\nTail\n"
    body = ok(ws, "docs_documents_get", {"documentId": did})["body"]["content"]
    assert body[1]["startIndex"] == 1 and body[1]["endIndex"] == 13 and body[-1]["endIndex"] == 18
    ok(ws, "docs_documents_batchUpdate", {"documentId": did, "body": {"requests": [
        {"deleteContentRange": {"range": {"startIndex": 1, "endIndex": 7}}}]}})
    assert ws.docs.text_of(did) == "world\nTail\n"
    before = ws.state_hash()
    e = err(ws, "docs_documents_batchUpdate", {"documentId": did, "body": {"requests": [
        {"replaceAllText": {"containsText": {"text": "world"}, "replaceText": "earth"}},
        {"insertText": {"location": {"index": 999}, "text": "x"}}]}})
    assert e["code"] == 400 and "Index 999" in e["message"]
    assert ws.state_hash() == before  # all or nothing
    r = ok(ws, "docs_documents_batchUpdate", {"documentId": did, "body": {"requests": [
        {"replaceAllText": {"containsText": {"text": "WORLD", "matchCase": False}, "replaceText": "earth"}}]}})
    assert r["replies"] == [{"replaceAllText": {"occurrencesChanged": 1}}]
    assert ok(ws, "drive_files_export", {"fileId": did, "mimeType": "text/plain"}) == "earth\nTail\n"
    ok(ws, "drive_files_update", {"fileId": did, "body": {"name": "Renamed"}})
    assert ok(ws, "docs_documents_get", {"documentId": did})["title"] == "Renamed"
    ok(ws, "drive_files_delete", {"fileId": did})
    assert did not in ws.docs.db.documents


def test_group_permissions_grant_access_to_members(ws):
    owner = next(p for p in ws.directory if p.department == "Finance")
    private = ws.drive.add_file(name="Private.txt", content="p", owner=owner.email)
    assert err(ws, "drive_files_get", {"fileId": private.id})["code"] == 404
    g = ws.drive.add_file(name="Group-shared.txt", content="g", owner=owner.email,
                          shared_with={f"all@{ws.domain}": "reader"})
    assert [p.type for p in g.permissions] == ["user", "group"]
    assert ok(ws, "drive_files_get", {"fileId": g.id})["name"] == "Group-shared.txt"
    f = g
    assert f.id in {x["id"] for x in ok(ws, "drive_files_list", {"q": "name = 'Group-shared.txt'"})["files"]}
