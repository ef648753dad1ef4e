"""The workspace core: determinism, exact snapshot/restore, diff, action log, and never raising on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from env0_posttrain.workspace import SERVICE_NAMES, TOOLS, Workspace, call_tool, openai_tools, service_tools

CONTRACT_TOOLS = """gmail_messages_list gmail_messages_get gmail_messages_send gmail_messages_modify gmail_messages_trash
gmail_labels_list gmail_drafts_create calendar_events_list calendar_events_insert calendar_events_patch
calendar_events_delete calendar_freebusy_query drive_files_list drive_files_get drive_files_create drive_files_update
drive_files_copy drive_files_delete drive_permissions_list drive_permissions_create drive_permissions_delete
docs_documents_get docs_documents_create docs_documents_batchUpdate slack_conversations_list
slack_conversations_history slack_chat_postMessage slack_users_lookupByEmail slack_reactions_add admin_users_list
admin_users_get admin_users_update admin_tokens_list admin_tokens_delete admin_asps_list admin_asps_delete
admin_groups_list admin_members_insert admin_members_delete""".split()


def _state_json(ws: Workspace) -> str:
    return json.dumps(ws.state(), sort_keys=True)


def test_same_seed_gives_byte_identical_state_and_other_seeds_differ():
    a, b = Workspace.seeded(7), Workspace.seeded(7)
    assert _state_json(a) == _state_json(b)
    assert a.state_hash() == b.state_hash()
    assert Workspace.seeded(8).state_hash() != a.state_hash()


def test_state_is_identical_in_a_fresh_process():
    code = "from env0_posttrain.workspace import Workspace; print(Workspace.seeded(3).state_hash())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout.strip()
    assert out == Workspace.seeded(3).state_hash()


def test_seeded_company_is_realistic():
    ws = Workspace.seeded(0)
    people = ws.directory
    assert 20 <= len(people) <= 30
    assert len({p.email for p in people}) == len(people)
    assert all(p.email.endswith("@" + ws.domain) and p.slack_user_id.startswith("U") for p in people)
    assert ws.me in people and ws.me.title == "Operations Manager"
    s = ws.state()
    assert len(s["gmail"]["messages"]) >= 50
    assert len(s["calendar"]["events"]) >= 50
    assert len(s["drive"]["files"]) >= 40 and len(s["docs"]["documents"]) >= 5
    assert len(s["slack"]["channels"]) >= 5 and len(s["slack"]["messages"]) >= 100
    assert len(s["admin"]["tokens"]) >= 10 and len(s["admin"]["groups"]) >= 4
    assert ws.now.tzinfo is not None


def test_contract_tool_names_exist_and_schemas_are_well_formed():
    missing = [n for n in CONTRACT_TOOLS if n not in TOOLS]
    assert not missing
    tools = openai_tools()
    assert len(tools) == len(TOOLS)
    for t in tools:
        f = t["function"]
        assert t["type"] == "function" and f["description"]
        assert f["parameters"]["type"] == "object"
        for r in f["parameters"].get("required", []):
            assert r in f["parameters"]["properties"]
    for svc in SERVICE_NAMES:
        names = service_tools(svc)
        assert names and all(TOOLS[n].service == svc for n in names)
    assert TOOLS["gmail_messages_send"].writes and not TOOLS["gmail_messages_list"].writes
    assert [t["function"]["name"] for t in openai_tools(["slack_chat_postMessage"])] == ["slack_chat_postMessage"]


def test_snapshot_restore_is_exact_and_reusable():
    ws = Workspace.seeded(1)
    h0 = ws.state_hash()
    ws.snapshot("start")
    bob = ws.directory[4]
    assert call_tool(ws, "gmail_messages_send", {"to": bob.email, "subject": "x", "body_text": "y"})["ok"]
    assert call_tool(ws, "slack_chat_postMessage", {"channel": "general", "text": "hello"})["ok"]
    assert ws.state_hash() != h0
    ws.restore("start")
    assert ws.state_hash() == h0
    assert call_tool(ws, "slack_chat_postMessage", {"channel": "general", "text": "again"})["ok"]
    ws.restore("start")
    assert ws.state_hash() == h0
    ws.reset()
    assert ws.state_hash() == h0 and ws.action_log == []
    with pytest.raises(KeyError):
        ws.restore("never-taken")


def test_ids_after_restore_are_the_same_as_before():
    ws = Workspace.seeded(1)
    ws.snapshot("s")
    first = call_tool(ws, "drive_files_create", {"body": {"name": "a.txt"}, "content": "a"})["result"]["id"]
    ws.restore("s")
    again = call_tool(ws, "drive_files_create", {"body": {"name": "a.txt"}, "content": "a"})["result"]["id"]
    assert first == again


def test_diff_reports_added_updated_deleted_since_seed():
    ws = Workspace.seeded(2)
    assert ws.diff() == {}
    msg = ws.gmail.mailbox()[0]
    call_tool(ws, "gmail_messages_modify", {"id": msg.id, "body": {"addLabelIds": ["STARRED"]}})
    call_tool(ws, "gmail_messages_delete", {"id": ws.gmail.mailbox()[1].id})
    call_tool(ws, "slack_chat_postMessage", {"channel": "general", "text": "hi"})
    d = ws.diff()
    assert msg.id in d["gmail"]["messages"]["updated"]
    assert "STARRED" in d["gmail"]["messages"]["updated"][msg.id]["after"]["labelIds"]
    assert len(d["gmail"]["messages"]["deleted"]) == 1
    assert len(d["slack"]["messages"]["added"]) == 1
    assert set(d) == {"gmail", "slack"}
    ws.snapshot("seed")  # moving the baseline, as tasks do after planting
    assert ws.diff() == {}


def test_a_row_rewritten_with_equal_values_is_not_a_diff():
    """Row equality is by value: the memoised JSON of one copy must not make it look updated."""
    ws = Workspace.seeded(2)
    msg = ws.gmail.mailbox()[0]
    msg.canonical()  # the seed's copy has its JSON memoised, the rewrite will not
    copy = msg.model_copy(update={"subject": msg.subject})
    assert copy is not msg and copy == msg and hash(copy) == hash(msg)
    assert copy != msg.model_copy(update={"subject": msg.subject + "!"})
    ws.gmail.db.messages[msg.id] = copy
    assert ws.diff() == {}


def test_action_log_records_every_call_with_outcome():
    ws = Workspace.seeded(0)
    call_tool(ws, "gmail_labels_list", {})
    call_tool(ws, "gmail_messages_get", {"id": "missing"})
    log = ws.action_log
    assert [e["tool"] for e in log] == ["gmail_labels_list", "gmail_messages_get"]
    assert log[0]["ok"] and not log[1]["ok"] and log[1]["status"] == 404
    assert ws.log("slack") == []


BAD_CALLS = [
    ("no_such_tool", {}),
    ("gmail_messages_get", "not a dict"),
    ("gmail_messages_get", {}),
    ("gmail_messages_get", {"id": ["a"]}),
    ("gmail_messages_list", {"maxResults": "lots"}),
    ("gmail_messages_list", {"bogus": 1}),
    ("gmail_messages_list", {"pageToken": "@@@"}),
    ("gmail_messages_send", {"subject": "no recipient"}),
    ("gmail_messages_send", {"body": {"raw": "%%%not-base64"}}),
    ("gmail_messages_modify", {"id": "x", "body": {}}),
    ("calendar_events_insert", {"body": {"summary": "no times"}}),
    ("calendar_events_insert", {"body": {"start": {"dateTime": "2026-03-12T10:00:00Z"},
                                         "end": {"dateTime": "2026-03-12T09:00:00Z"}}}),
    ("calendar_events_list", {"timeMin": "yesterday"}),
    ("drive_files_list", {"q": "name = "}),
    ("drive_files_get", {"fileId": "nope"}),
    ("drive_permissions_create", {"fileId": "nope", "body": {"type": "user", "role": "reader"}}),
    ("docs_documents_batchUpdate", {"documentId": "nope", "body": {"requests": []}}),
    ("slack_chat_postMessage", {"channel": "C000", "text": "x"}),
    ("slack_chat_postMessage", {"channel": "general"}),
    ("slack_conversations_history", {"channel": "general", "cursor": "###"}),
    ("admin_users_get", {"userKey": "ghost@nowhere.com"}),
    ("admin_tokens_delete", {"userKey": "ghost@nowhere.com", "clientId": "x"}),
]


@pytest.mark.parametrize("name,args", BAD_CALLS)
def test_bad_input_returns_the_api_error_body_and_leaves_state_untouched(name, args):
    ws = Workspace.seeded(0)
    h = ws.state_hash()
    res = call_tool(ws, name, args)
    assert res["ok"] is False
    err = res["error"]
    if name.startswith("slack_"):
        assert err["ok"] is False and isinstance(err["error"], str)
    else:
        assert 400 <= err["error"]["code"] < 500
        assert err["error"]["errors"][0]["reason"] and err["error"]["status"]
    assert ws.state_hash() == h


def test_a_failing_write_is_rolled_back(monkeypatch):
    ws = Workspace.seeded(0)
    h = ws.state_hash()

    def boom(_msg):
        raise RuntimeError("delivery crashed half-way")

    monkeypatch.setattr(ws.gmail, "deliver", boom)
    res = call_tool(ws, "gmail_messages_send", {"to": ws.directory[3].email, "subject": "s", "body_text": "b"})
    assert res["ok"] is False and res["error"]["error"]["code"] == 500
    assert ws.state_hash() == h


def test_frozen_clock_stamps_writes():
    ws = Workspace.seeded(0)
    r = call_tool(ws, "gmail_messages_send", {"to": "x@example.com", "subject": "s", "body_text": "b"})["result"]
    got = call_tool(ws, "gmail_messages_get", {"id": r["id"], "format": "minimal"})["result"]
    assert int(got["internalDate"]) == ws.now_ms()


def test_workspaces_from_the_same_seed_are_isolated():
    a, b = Workspace.seeded(5), Workspace.seeded(5)
    call_tool(a, "slack_chat_postMessage", {"channel": "general", "text": "only in a"})
    assert a.state_hash() != b.state_hash()
    assert b.state_hash() == Workspace.seeded(5).state_hash()


def test_fork_is_independent_and_keeps_the_baseline():
    ws = Workspace.seeded(6)
    ws.slack.add_message("general", user=ws.directory[1].slack_user_id, text="planted")
    ws.snapshot("seed")
    start = ws.fork()
    assert start.state_hash() == ws.state_hash()
    call_tool(ws, "slack_chat_postMessage", {"channel": "general", "text": "agent"})
    assert start.state_hash() != ws.state_hash() and start.diff() == {}
    assert list(ws.diff()["slack"]["messages"]["added"].values())[0]["text"] == "agent"
    ws.reset()
    assert ws.state_hash() == start.state_hash()


def test_a_fork_shares_snapshots_but_never_leaks_writes_either_way():
    """Forks share the source's snapshot DBs (read-only) and its rows; no write on either side reaches the other."""
    src = Workspace.seeded(6)
    src.slack.add_message("general", user=src.directory[1].slack_user_id, text="planted")
    src.snapshot("seed")
    src.snapshot("mid")
    before = _state_json(src)
    seed_dump = {n: db.dump() for n, db in src._snapshots["seed"][0].items()}
    fork = src.fork()
    assert fork._snapshots["seed"][0]["slack"] is src._snapshots["seed"][0]["slack"]  # shared, not copied
    assert fork.slack.db is not src.slack.db and fork.slack.db.messages is not src.slack.db.messages
    # writes through tools, seeding helpers, restore and a rolled-back failure on the fork
    call_tool(fork, "slack_chat_postMessage", {"channel": "general", "text": "fork"})
    fork.gmail.add_message(sender="a@example.com", subject="helper write", body="x")
    fork.restore("mid", service="slack")
    call_tool(fork, "slack_chat_postMessage", {"channel": "general", "text": "after restore"})
    assert not call_tool(fork, "gmail_messages_trash", {"id": "nope"})["ok"]
    fork.snapshot("seed")  # re-taking a snapshot on the fork replaces its entry, not the shared DBs
    assert _state_json(src) == before
    assert {n: db.dump() for n, db in src._snapshots["seed"][0].items()} == seed_dump
    assert src.diff() == {} and src.snapshots() == ["mid", "seed"]
    # and the other way: the source's writes and resets leave the fork alone
    fork_state = _state_json(fork)
    call_tool(src, "slack_chat_postMessage", {"channel": "general", "text": "source"})
    src.reset()
    assert _state_json(fork) == fork_state and _state_json(src) == before


def test_seeded_workspaces_never_write_into_the_shared_template():
    a = Workspace.seeded(7)
    fresh = Workspace.seeded(7).state_hash()
    a.gmail.add_message(sender="a@example.com", subject="planted before the first call", body="x")
    call_tool(a, "slack_chat_postMessage", {"channel": "general", "text": "x"})
    a.reset()
    call_tool(a, "gmail_messages_send", {"to": "x@example.com", "subject": "s", "body_text": "b"})
    a.restore("seed", service="gmail")
    b = Workspace.seeded(7)
    assert b.state_hash() == fresh and b.diff() == {}
    assert b.company is a.company  # one frozen company per seed, shared
    with pytest.raises(Exception):
        b.company.people[0].email = "changed@example.com"  # type: ignore[misc]


def test_db_clone_is_model_construct_with_fresh_tables_and_an_empty_memo():
    ws = Workspace.seeded(0)
    for name in SERVICE_NAMES:
        db = ws.service(name).db
        db.cached("k", 1, lambda: "memo")
        fast = db.clone()
        slow = type(db).model_construct(**{k: (v.copy() if isinstance(v, dict) else v) for k, v in db.__dict__.items()})
        assert type(fast) is type(db) and fast == slow and fast.canonical() == db.canonical()
        assert fast.__pydantic_fields_set__ == slow.__pydantic_fields_set__
        assert fast.__pydantic_private__ == slow.__pydantic_private__ == {"_cache": None}
        assert fast.__pydantic_extra__ == slow.__pydantic_extra__
        for tname, t in db.tables().items():
            copy = fast.tables()[tname]
            assert copy is not t and type(copy) is type(t) and copy == t and copy.version == t.version
            copy["new"] = None  # type: ignore[assignment]
            assert "new" not in t


def test_address_lists_may_be_given_as_lists():
    ws = Workspace.seeded(0)
    a, b = ws.directory[2].email, ws.directory[3].email
    r = call_tool(ws, "gmail_messages_send", {"to": [a, b], "subject": "s", "body_text": "b"})
    assert r["ok"] and ws.gmail.db.messages[r["result"]["id"]].to == (a, b)


def test_items_planted_before_the_first_call_belong_to_the_baseline():
    ws = Workspace.seeded(9)
    planted = ws.gmail.add_message(sender="a@example.com", subject="planted", body="x")
    assert ws.diff() == {}  # no explicit snapshot("seed") needed
    call_tool(ws, "gmail_messages_trash", {"id": planted.id})
    ws.gmail.add_message(sender="b@example.com", subject="arrives mid-episode", body="y")
    d = ws.diff()["gmail"]["messages"]
    assert list(d["updated"]) == [planted.id] and len(d["added"]) == 1
    ws.reset()
    assert "TRASH" not in ws.gmail.db.messages[planted.id].labelIds and ws.diff() == {}
