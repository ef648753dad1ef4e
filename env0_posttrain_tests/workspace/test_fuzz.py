"""Property-based fuzzing: random tool-call sequences and raw HTTP requests never produce a 5xx, keep the
state consistent, and a restore always returns the exact starting hash."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env0_posttrain.workspace import TOOLS, Workspace, call_tool
from env0_posttrain.workspace.http_app import create_app
from env0_posttrain.workspace.services.drive.data_model import GDOC
from env0_posttrain_tests.support.workspace import assert_not_a_server_error

BASE = Workspace.seeded(0)
POOL = {
    "string": [BASE.gmail.mailbox()[0].id, BASE.gmail.mailbox()[0].threadId, "me", "primary", "general", "random",
               BASE.directory[3].email, BASE.directory[3].slack_user_id, BASE.me.email, "INBOX", "UNREAD",
               next(iter(BASE.drive.db.files)), next(iter(BASE.docs.db.documents)), next(iter(BASE.calendar.db.events)),
               next(iter(BASE.slack.db.channels)), next(iter(BASE.slack.db.messages)).split("/")[1],
               "is:unread from:" + BASE.directory[3].first, "name contains 'a'", "2026-03-11T00:00:00Z",
               "2026-03-12T00:00:00Z", "startTime", "full", "raw", "minimal", "media", "reader", "writer"],
}
junk = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.text(max_size=12),
                 st.lists(st.text(max_size=6), max_size=3), st.dictionaries(st.text(max_size=5), st.text(max_size=5),
                                                                            max_size=2))
bodies = st.one_of(
    st.fixed_dictionaries({}, optional={
        "name": st.text(max_size=8), "summary": st.text(max_size=8), "title": st.text(max_size=8),
        "start": st.fixed_dictionaries({"dateTime": st.sampled_from(["2026-03-12T10:00:00Z", "bad", ""])}),
        "end": st.fixed_dictionaries({"dateTime": st.sampled_from(["2026-03-12T11:00:00Z", "2026-03-12T09:00:00Z"])}),
        "attendees": st.lists(st.fixed_dictionaries({"email": st.sampled_from([BASE.directory[2].email, "x", ""])}),
                              max_size=2),
        "addLabelIds": st.lists(st.sampled_from(["STARRED", "UNREAD", "Label_1", "nope"]), max_size=2),
        "removeLabelIds": st.lists(st.sampled_from(["INBOX", "UNREAD"]), max_size=2),
        "type": st.sampled_from(["user", "anyone", "domain", "bogus"]),
        "role": st.sampled_from(["reader", "writer", "owner", "x"]),
        "emailAddress": st.sampled_from([BASE.directory[4].email, "not-an-email"]),
        "requests": st.lists(st.sampled_from([
            {"insertText": {"location": {"index": 1}, "text": "hi "}},
            {"insertText": {"location": {"index": 10**6}, "text": "x"}},
            {"deleteContentRange": {"range": {"startIndex": 1, "endIndex": 3}}},
            {"replaceAllText": {"containsText": {"text": "the"}, "replaceText": "a"}}, {"bogus": {}}]), max_size=3),
        "suspended": st.booleans(), "raw": st.sampled_from(["", "!!", "VG86IGFAYi5jb20KCmhp"]),
        "items": st.lists(st.fixed_dictionaries({"id": st.sampled_from([BASE.me.email, "nobody"])}), max_size=2),
        "timeMin": st.sampled_from(["2026-03-11T00:00:00Z", "x"]), "timeMax": st.sampled_from(["2026-03-13T00:00:00Z"]),
        "email": st.sampled_from([BASE.directory[6].email, "ghost@x.com"]), "id": st.sampled_from(POOL["string"]),
    }),
    junk)
# Calendar calendars/calendarList/acl/settings/channels: their ids and body fields.
POOL["string"] += [f"user:{BASE.directory[3].email}", f"user:{BASE.me.email}", "default", "timezone", "weekStart",
                   next(c for c in BASE.calendar.db.calendars if c.endswith("@group.calendar.google.com")),
                   "Lunch with Ann tomorrow 12pm-1pm", "Dentist on Friday", "7"]
calendar_bodies = st.fixed_dictionaries({}, optional={
    "summary": st.text(max_size=8), "timeZone": st.sampled_from(["UTC", "Europe/Paris", "Mars/Base", "", 5]),
    "role": st.sampled_from(["none", "freeBusyReader", "reader", "writer", "owner", "x", None]),
    "scope": st.one_of(junk, st.fixed_dictionaries({"type": st.sampled_from(["user", "group", "domain", "default", "x"])},
                                                   optional={"value": st.sampled_from([BASE.directory[4].email,
                                                                                       BASE.me.email, "acme.com",
                                                                                       "bad value", ""])})),
    "id": st.sampled_from(POOL["string"]), "colorId": st.sampled_from(["1", "11", "24", "99", 3, None]),
    "backgroundColor": st.sampled_from(["#112233", "red"]), "hidden": st.one_of(st.booleans(), junk),
    "defaultReminders": st.one_of(junk, st.just([{"method": "popup", "minutes": 10}])),
    "iCalUID": st.sampled_from(["a@b", "", None]), "recurrence": st.sampled_from([["RRULE:FREQ=DAILY;COUNT=3"],
                                                                                   ["RRULE:BOGUS"], "x"]),
    "start": st.fixed_dictionaries({"dateTime": st.sampled_from(["2026-03-12T10:00:00Z", "bad"])}),
    "end": st.fixed_dictionaries({"dateTime": st.sampled_from(["2026-03-12T11:00:00Z"])}),
    "type": st.sampled_from(["web_hook", "x"]), "address": st.sampled_from(["https://h.example.com", "http://x"]),
    "resourceId": st.text(max_size=4), "organizer": junk})
bodies = st.one_of(bodies, calendar_bodies)
# Slack files, reminders, scheduled messages, profiles: ids, times and structured (JSON string) arguments.
_SLACK_PLANT = Workspace.seeded(0)
_SLACK_FILE = _SLACK_PLANT.slack.add_file("general", name="plan.md", content="# Plan", user=BASE.me.slack_user_id)
POOL["string"] += [_SLACK_FILE.id, "F_NOPE", "Rm_NOPE", "Q_NOPE", "in 15 minutes", "tomorrow at 9am", "every weekday",
                   str(int(BASE.now.timestamp()) + 3600), "away", "auto", "proj-x", ":tada:", "thumbsup",
                   '{"status_text": "Out", "status_emoji": ":palm_tree:"}', f'[{{"id": "{_SLACK_FILE.id}"}}]', "[1]"]
# Gmail settings/history and Drive comments/replies/revisions/changes/shared drives: ids and body fields.
_FILE_WITH_COMMENT = next(iter(BASE.drive.db.comments.values())).fileId
POOL["string"] += [BASE.gmail.filters_of()[0].id, next(iter(BASE.drive.db.comments)), next(iter(BASE.drive.db.replies)),
                   _FILE_WITH_COMMENT, "head", "1", "2", "1000", str(BASE.gmail.db.history), "messageAdded", "labelAdded",
                   "projects/p/topics/t", f"support@{BASE.domain}", "x@outside.example", next(iter(BASE.drive.db.drives))]
google_bodies = st.fixed_dictionaries({}, optional={
    "criteria": st.one_of(junk, st.fixed_dictionaries({}, optional={
        "from": st.sampled_from([BASE.directory[3].email, ""]), "subject": st.text(max_size=5), "query": st.text(max_size=8),
        "hasAttachment": st.booleans(), "size": st.integers(-1, 10**5), "sizeComparison": st.sampled_from(["larger", "x"])})),
    "action": st.one_of(junk, st.fixed_dictionaries({}, optional={
        "addLabelIds": st.lists(st.sampled_from(["STARRED", "Label_1", "nope"]), max_size=2),
        "removeLabelIds": st.lists(st.sampled_from(["INBOX"]), max_size=1),
        "forward": st.sampled_from([BASE.directory[3].email, "x@outside.example"])}), st.sampled_from(["resolve", "reopen"])),
    "forwardingEmail": st.sampled_from([BASE.directory[3].email, "x@outside.example", "bad", 5]),
    "sendAsEmail": st.sampled_from([BASE.me.email, f"support@{BASE.domain}", "bad"]),
    "delegateEmail": st.sampled_from([BASE.directory[4].email, BASE.me.email, "x@outside.example"]),
    "enableAutoReply": st.one_of(st.booleans(), junk), "startTime": st.sampled_from(["1", "x", 5]),
    "endTime": st.sampled_from(["2", "0"]), "enabled": st.booleans(), "emailAddress": st.sampled_from(
        [BASE.directory[3].email, "x@outside.example"]), "disposition": st.sampled_from(["archive", "x"]),
    "displayLanguage": st.one_of(st.sampled_from(["fr", ""]), junk), "isDefault": st.one_of(st.booleans(), junk),
    "signature": st.text(max_size=5), "content": st.one_of(st.text(max_size=6), junk),
    "keepForever": st.one_of(st.booleans(), junk), "published": st.booleans(), "colorRgb": st.sampled_from(["#112233", "red"]),
    "topicName": st.sampled_from(["projects/p/topics/t", "t"]), "labelIds": st.lists(st.sampled_from(["INBOX", "x"]), max_size=2),
    "message": st.one_of(junk, st.fixed_dictionaries({"raw": st.sampled_from(["", "VG86IGFAYi5jb20KCmhp"])})),
    "name": st.text(max_size=5), "role": st.sampled_from(["reader", "writer", "owner", "organizer", "x"]),
    "id": st.sampled_from(POOL["string"]), "resourceId": st.text(max_size=4),
    "type": st.sampled_from(["web_hook", "user"]), "address": st.sampled_from(["https://h.example.com", "x"])})
bodies = st.one_of(bodies, google_bodies)


@st.composite
def tool_calls(draw, names: tuple[str, ...] = ()):
    name = draw(st.sampled_from(sorted(names or TOOLS)))
    spec = TOOLS[name]
    args = {}
    for p, kind in spec.kinds.items():
        if p not in spec.required and draw(st.booleans()):
            continue
        if p == "body":
            args[p] = draw(bodies)
        elif kind == "string":
            args[p] = draw(st.one_of(st.sampled_from(POOL["string"]), junk))
        elif kind == "integer":
            args[p] = draw(st.one_of(st.integers(-3, 600), junk))
        else:
            args[p] = draw(junk)
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(min_size=1, max_size=5))] = draw(junk)
    return name, args


def consistent(ws: Workspace) -> None:
    g = ws.gmail.db
    for d in g.drafts.values():
        assert "DRAFT" in g.messages[d.messageId].labelIds
    for m in g.messages.values():
        for lid in m.labelIds:
            assert ws.gmail.valid_label(m.userId, lid), (m.id, lid)
    for e in ws.calendar.db.events.values():
        assert e.calendarId in ws.calendar.db.calendars
    c = ws.calendar.db
    assert all(r.calendarId in c.calendars and k == f"{r.calendarId}/{r.id}" for k, r in c.acl.items())
    assert all(k in c.calendars for k in c.calendarList) and ws.me.email in c.calendarList
    files, docs = ws.drive.db.files, ws.docs.db.documents
    for f in files.values():
        owners = [p for p in f.permissions if p.role == "owner"]
        assert len(owners) == 1 and owners[0].emailAddress == f.ownerEmail
    assert {i for i, f in files.items() if f.mimeType == GDOC} == set(docs)
    for m in ws.slack.db.messages.values():
        assert m.channel in ws.slack.db.channels
    sl = ws.slack.db
    assert all(set(f.channels) <= set(sl.channels) for f in sl.files.values())
    assert all(s.channel in sl.channels for s in sl.scheduled.values())
    assert all(r.user in sl.users and r.creator in sl.users for r in sl.reminders.values())
    d = ws.drive.db
    assert all(r.commentId in d.comments and d.comments[r.commentId].fileId == r.fileId for r in d.replies.values())
    assert all(k in files and files[k].mimeType == "application/vnd.google-apps.folder" for k in d.drives)
    assert all(k.split("/")[0] in files for k in d.revisions)
    assert list(g.historyLog) == sorted(g.historyLog)
    a = ws.admin.db
    for m in a.members.values():
        assert m.groupId in a.groups and (m.id in a.users or m.id in a.groups)
    for table in (a.tokens, a.asps, a.codes):
        assert all(r.userId in a.users for r in table.values())
    st = ws.stripe.db
    for ch in st.charges.values():
        assert ch.amount_refunded == sum(r.amount for r in st.refunds.values() if r.charge_id == ch.id) <= ch.amount_captured
    assert all(r.charge_id in st.charges for r in st.refunds.values())
    json.dumps(ws.state())
    assert ws.state_hash() == ws.state_hash()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tool_calls(), min_size=1, max_size=8))
def test_random_tool_sequences_never_5xx_stay_consistent_and_restore_exactly(calls):
    ws = Workspace.seeded(0)
    assert ws.slack.add_file("general", name="plan.md", content="# Plan", user=ws.me.slack_user_id) == _SLACK_FILE
    h0 = ws.state_hash()
    ws.snapshot("start")
    for name, args in calls:
        assert_not_a_server_error(name, args, call_tool(ws, name, args))
    consistent(ws)
    ws.restore("start")
    assert ws.state_hash() == h0


SLACK_TOOLS = tuple(n for n, spec in TOOLS.items() if spec.service == "slack")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tool_calls(SLACK_TOOLS), min_size=1, max_size=10))
def test_random_slack_sequences_answer_slack_shaped_errors_and_restore_exactly(calls):
    ws = Workspace.seeded(0)
    ws.slack.add_file("general", name="plan.md", content="# Plan", user=ws.me.slack_user_id)
    h0 = ws.state_hash()
    ws.snapshot("start")
    for name, args in calls:
        res = call_tool(ws, name, args)
        if not res["ok"]:
            err = res["error"]
            assert err["ok"] is False and (isinstance(err.get("error"), str) or err.get("not_in_channel")), (name, err)
            assert err.get("error") != "internal_error", (name, args)
    consistent(ws)
    ws.restore("start")
    assert ws.state_hash() == h0


CLIENT = TestClient(create_app(lambda: Workspace.seeded(0)))
PATHS = ["/gmail/v1/users/me/messages", "/gmail/v1/users/me/messages/send", "/gmail/v1/users/me/labels",
         "/gmail/v1/users/other@x.com/messages", "/calendar/v3/calendars/primary/events", "/calendar/v3/freeBusy",
         "/drive/v3/files", "/upload/drive/v3/files", "/v1/documents", "/v1/documents/x:batchUpdate",
         "/admin/directory/v1/users", "/admin/directory/v1/groups/nope/members", "/api/chat.postMessage",
         "/api/conversations.history", "/api/unknown.method", "/nothing/here", "/_admin/diff", "/_admin/gmail/state"]
PATHS += ["/calendar/v3/calendars", "/calendar/v3/calendars/primary", "/calendar/v3/calendars/primary/clear",
          "/calendar/v3/calendars/primary/acl", "/calendar/v3/calendars/primary/acl/default",
          "/calendar/v3/calendars/nope/acl/user%3Ax%40y.com", "/calendar/v3/users/me/calendarList",
          "/calendar/v3/users/me/calendarList/primary", "/calendar/v3/users/me/settings",
          "/calendar/v3/users/me/settings/timezone", "/calendar/v3/colors", "/calendar/v3/channels/stop",
          "/calendar/v3/calendars/primary/events/import", "/calendar/v3/calendars/primary/events/quickAdd",
          "/calendar/v3/calendars/primary/events/watch", "/calendar/v3/calendars/primary/events/nope/instances"]
PATHS += ["/api/files.upload", "/api/files.getUploadURLExternal", "/api/files.completeUploadExternal",
          "/api/files.list", "/api/files.info", "/api/files.delete", "/upload/v1/F_NOPE", "/api/reminders.add",
          "/api/reminders.list", "/api/chat.scheduleMessage", "/api/chat.scheduledMessages.list",
          "/api/users.profile.set", "/api/users.setPresence", "/api/conversations.rename", "/api/pins.remove",
          "/api/reactions.list", "/api/team.info"]
_U, _F, _C = "/gmail/v1/users/me", f"/drive/v3/files/{_FILE_WITH_COMMENT}", next(iter(BASE.drive.db.comments))
PATHS += [f"{_U}/threads/{BASE.gmail.mailbox()[0].threadId}/modify", f"{_U}/threads/nope/trash", f"{_U}/threads/x/untrash",
          f"{_U}/drafts/r1", f"{_U}/labels/Label_1", f"{_U}/messages/import", "/upload" + f"{_U}/messages", f"{_U}/history",
          f"{_U}/watch", f"{_U}/stop", f"{_U}/settings/filters", f"{_U}/settings/filters/nope",
          f"{_U}/settings/forwardingAddresses/x%40y.com", f"{_U}/settings/sendAs", f"{_U}/settings/sendAs/{BASE.me.email}",
          f"{_U}/settings/sendAs/a%40b.c/verify", f"{_U}/settings/delegates", f"{_U}/settings/vacation",
          f"{_U}/settings/autoForwarding", f"{_U}/settings/imap", f"{_U}/settings/pop", f"{_U}/settings/language",
          f"{_F}/comments/{_C}", f"{_F}/comments/{_C}/replies", f"{_F}/comments/nope/replies/x", f"{_F}/revisions",
          f"{_F}/revisions/head", f"{_F}/permissions/nope", f"{_F}/watch", "/drive/v3/changes", "/drive/v3/changes/watch",
          "/drive/v3/changes/startPageToken", "/drive/v3/channels/stop", "/drive/v3/about", "/drive/v3/files/generateIds",
          "/drive/v3/files/trash", "/drive/v3/drives", "/drive/v3/drives/nope", "/drive/v3/drives/nope/hide",
          f"/drive/v3/drives/{next(iter(BASE.drive.db.drives))}"]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]), st.sampled_from(PATHS),
       st.dictionaries(st.sampled_from(["q", "maxResults", "pageToken", "alt", "fields", "uploadType", "limit",
                                        "channel", "text", "timeMin", "orderBy", "bogus", "file", "files", "time",
                                        "profile", "post_at", "name"]), st.text(max_size=10),
                       max_size=3),
       st.one_of(st.binary(max_size=40), st.just(b'{"raw": 5}'), st.just(b"[1,2]"), st.just(b'{"name": "x"}')),
       st.sampled_from(["application/json", "application/x-www-form-urlencoded", "multipart/related; boundary=b",
                        "multipart/form-data; boundary=b", "multipart/form-data", "text/plain"]))
def test_raw_http_garbage_never_gets_a_5xx(method, path, params, body, ctype):
    h0 = CLIENT.app.state.ws.state_hash()
    CLIENT.app.state.ws.snapshot("before")
    r = CLIENT.request(method, path, params=params, content=body, headers={"content-type": ctype})
    assert r.status_code < 500, (method, path, params, body, r.text)
    if r.status_code != 204 and r.content:
        r.json() if "json" in r.headers.get("content-type", "") else None
    CLIENT.app.state.ws.restore("before")
    assert CLIENT.app.state.ws.state_hash() == h0


@pytest.mark.parametrize("method,path,params,body,status,reason", [
    ("GET", "/gmail/v1/users/me/messages", {"bogus": "1"}, b"", 400, "invalid"),
    ("GET", "/gmail/v1/users/me/messages", {"maxResults": "lots"}, b"", 400, "invalid"),
    ("GET", "/gmail/v1/users/me/messages", {"alt": "xml"}, b"", 400, "invalid"),
    ("POST", "/gmail/v1/users/me/messages/send", {}, b"{not json", 400, "parseError"),
    ("POST", "/calendar/v3/calendars/primary/events", {}, b"[1]", 400, "parseError"),
    ("GET", "/drive/v3/files/nope", {}, b"", 404, "notFound"),
    ("GET", "/drive/v3/files", {"fields": "files(id"}, b"", 400, "invalidParameter"),
    ("DELETE", "/gmail/v1/users/me/labels/INBOX", {}, b"", 400, "invalidArgument"),
    ("GET", "/no/such/api", {}, b"", 404, "notFound"),
])
def test_http_errors_have_the_google_shape_and_change_nothing(method, path, params, body, status, reason):
    h0 = CLIENT.app.state.ws.state_hash()
    r = CLIENT.request(method, path, params=params, content=body, headers={"content-type": "application/json"})
    assert r.status_code == status
    err = r.json()["error"]
    assert err["code"] == status and err["errors"][0]["reason"] == reason and err["status"]
    assert CLIENT.app.state.ws.state_hash() == h0


def test_slack_errors_are_http_200_with_ok_false():
    assert CLIENT.post("/api/unknown.method").json()["error"] == "unknown_method"
    r = CLIENT.post("/api/chat.postMessage", data={"channel": "nope", "text": "x"})
    assert r.status_code == 200 and r.json() == {"ok": False, "error": "channel_not_found"}
    r = CLIENT.post("/api/chat.postMessage", content=b"{bad", headers={"content-type": "application/json"})
    assert r.json() == {"ok": False, "error": "invalid_json"}


# -- hostile bodies: nesting past any parser's depth, payloads past the APIs' limits -------------------------------
JSON_ROUTES = [("POST", "/gmail/v1/users/me/messages/send"), ("POST", "/calendar/v3/calendars/primary/events"),
               ("POST", "/drive/v3/files"), ("POST", "/v1/documents"), ("POST", "/admin/directory/v1/users"),
               ("POST", "/gmail/v1/users/me/labels"), ("POST", "/_admin/snapshot"), ("POST", "/_admin/restore"),
               ("POST", "/_admin/seed"), ("POST", "/_admin/gmail/snapshot")]
SLACK_JSON_ROUTES = ["/api/chat.postMessage", "/api/users.profile.set", "/api/conversations.create"]


def _nested(depth: int, leaf: str = "1") -> bytes:
    return ('{"a": ' * depth + leaf + "}" * depth).encode()


@pytest.mark.parametrize("depth", [101, 1_000, 50_000])
@pytest.mark.parametrize("method,path", JSON_ROUTES)
def test_json_nested_past_the_parsers_depth_gets_a_google_400_and_changes_nothing(method, path, depth):
    h0 = CLIENT.app.state.ws.state_hash()
    r = CLIENT.request(method, path, content=_nested(depth), headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["errors"][0]["reason"] == "parseError"
    assert CLIENT.app.state.ws.state_hash() == h0


@pytest.mark.parametrize("depth", [101, 1_000])
@pytest.mark.parametrize("path", SLACK_JSON_ROUTES)
def test_slack_json_nested_too_deep_is_invalid_json(path, depth):
    h0 = CLIENT.app.state.ws.state_hash()
    r = CLIENT.post(path, content=_nested(depth), headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json() == {"ok": False, "error": "invalid_json"}
    deep_form = CLIENT.post("/api/users.profile.set", data={"profile": _nested(depth).decode()})
    assert deep_form.status_code == 200 and deep_form.json()["ok"] is False
    assert CLIENT.app.state.ws.state_hash() == h0


def test_json_nested_within_the_limit_is_stored_and_snapshots_still_work():
    client = TestClient(create_app(lambda: Workspace.seeded(0)))
    body = {"summary": "deep", "start": {"dateTime": "2026-03-12T10:00:00Z"}, "end": {"dateTime": "2026-03-12T11:00:00Z"},
            "attendees": [{"email": BASE.directory[2].email}]}
    assert client.post("/calendar/v3/calendars/primary/events", json=body).status_code == 200
    assert client.post("/_admin/snapshot", content=_nested(99, '"x"')).status_code == 200


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([p for _m, p in JSON_ROUTES] + SLACK_JSON_ROUTES + PATHS[:20]),
       st.integers(1, 3_000), st.sampled_from(["[", '{"a": ', '{"requests": [']))
def test_nesting_of_any_depth_never_gets_a_5xx(path, depth, opener):
    closer = {"[": "]", '{"a": ': "}", '{"requests": [': "]}"}[opener]
    body = (opener * depth + "1" + closer * depth).encode()
    r = CLIENT.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code < 500, (path, depth, r.text[:200])


@pytest.mark.parametrize("path,limit", [("/gmail/v1/users/me/messages/send", 10 * 1024 * 1024),
                                        ("/upload/drive/v3/files", 5 * 1024 * 1024),
                                        ("/_admin/snapshot", 10 * 1024 * 1024)])
def test_a_body_over_the_apis_payload_limit_gets_413_and_is_not_stored(path, limit):
    h0 = CLIENT.app.state.ws.state_hash()
    big = b'{"raw": "' + b"A" * limit + b'"}'
    r = CLIENT.post(path, content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert r.json()["error"]["message"] == f"Request payload size exceeds the limit: {limit} bytes."

    def chunks():  # no Content-Length: the limit holds while reading
        for i in range(0, len(big), 1 << 20):
            yield big[i:i + (1 << 20)]

    assert CLIENT.post(path, content=chunks(), headers={"content-type": "application/json"}).status_code == 413
    assert CLIENT.app.state.ws.state_hash() == h0


def test_stripe_nested_json_and_oversized_bodies_get_stripe_shaped_4xx():
    h0 = CLIENT.app.state.ws.state_hash()
    r = CLIENT.post("/v1/customers", content=_nested(1_000), headers={"content-type": "application/json",
                                                                      "authorization": "Bearer sk_test_x"})
    assert 400 <= r.status_code < 500 and "error" in r.json(), r.text
    r = CLIENT.post("/v1/customers", content=b"name=" + b"x" * (10 * 1024 * 1024),
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 413 and r.json()["error"]["type"] == "invalid_request_error"
    assert CLIENT.app.state.ws.state_hash() == h0


def test_slack_over_the_limit_gets_413_with_the_slack_shape():
    r = CLIENT.post("/api/chat.postMessage", data={"channel": "general", "text": "x" * (10 * 1024 * 1024)})
    assert r.status_code == 413 and r.json()["ok"] is False and r.json()["error"] == "request_too_large"


def test_seed_refuses_to_drop_named_snapshots_unless_told():
    client = TestClient(create_app(lambda: Workspace.seeded(0)))
    client.post("/_admin/snapshot", json={"name": "mine"})
    r = client.post("/_admin/seed", json={"seed": 3})
    assert r.status_code == 412 and "mine" in r.json()["error"]["message"]
    assert "mine" in client.get("/_admin/snapshots").json()["snapshots"]  # nothing dropped
    r = client.post("/_admin/seed", json={"seed": 3, "drop_snapshots": True})
    assert r.status_code == 200 and r.json()["dropped_snapshots"] == ["mine"] and r.json()["seed"] == 3
    assert client.get("/_admin/snapshots").json()["snapshots"] == ["seed"]
    assert client.post("/_admin/seed", json={"seed": 1}).status_code == 200  # no named snapshot: nothing to refuse
