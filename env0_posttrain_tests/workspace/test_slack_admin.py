"""Slack (membership, DMs, threads, cursors, reactions) and the Admin Directory (users, tokens, app passwords,
backup codes, groups) as the agent user sees them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain_tests.support.workspace import err as slack_err
from env0_posttrain_tests.support.workspace import ok


@pytest.fixture()
def ws():
    return Workspace.seeded(31)


def test_private_channels_are_invisible_to_non_members(ws):
    secret = ws.slack.add_channel("hr-private", members=[ws.directory[0].slack_user_id], private=True)
    names = {c["name"] for c in ok(ws, "slack_conversations_list", {"types": "public_channel,private_channel"})["channels"]}
    assert "hr-private" not in names and "general" in names
    assert slack_err(ws, "slack_conversations_history", {"channel": secret.id}) == "channel_not_found"
    assert slack_err(ws, "slack_conversations_list", {"types": "bogus"}) == "invalid_types"


def test_dm_by_user_id_creates_one_im(ws):
    other = ws.directory[4].slack_user_id
    a = ok(ws, "slack_chat_postMessage", {"channel": other, "text": "hi"})
    b = ok(ws, "slack_chat_postMessage", {"channel": other, "text": "again"})
    assert a["channel"] == b["channel"] and a["channel"].startswith("D")
    ims = ok(ws, "slack_conversations_list", {"types": "im"})["channels"]
    assert [c["user"] for c in ims] == [other]


def test_threads_history_cursor_and_time_bounds(ws):
    parent = ok(ws, "slack_chat_postMessage", {"channel": "general", "text": "parent"})
    ok(ws, "slack_chat_postMessage", {"channel": "general", "text": "reply", "thread_ts": parent["ts"]})
    hist = ok(ws, "slack_conversations_history", {"channel": "general", "limit": 1})
    assert hist["messages"][0]["text"] == "parent" and hist["messages"][0]["reply_count"] == 1
    replies = ok(ws, "slack_conversations_replies", {"channel": "general", "ts": parent["ts"]})["messages"]
    assert [m["text"] for m in replies] == ["parent", "reply"]
    seen, cursor = [], None
    while True:
        page = ok(ws, "slack_conversations_history", {"channel": "general", "limit": 7, **({"cursor": cursor} if cursor else {})})
        seen += [m["ts"] for m in page["messages"]]
        cursor = page["response_metadata"]["next_cursor"]
        if not cursor:
            assert page["has_more"] is False
            break
    top_level = [m for m in ws.slack.history("general") if not m.thread_ts or m.thread_ts == m.ts]
    assert len(seen) == len(set(seen)) == len(top_level)
    newest_first = sorted(seen, key=lambda t: tuple(int(x) for x in t.split(".")), reverse=True)
    assert seen == newest_first
    recent = ok(ws, "slack_conversations_history", {"channel": "general", "oldest": parent["ts"], "inclusive": True})
    assert [m["text"] for m in recent["messages"]] == ["parent"]


def test_edit_delete_react_rules(ws):
    mine = ok(ws, "slack_chat_postMessage", {"channel": "general", "text": "typo"})
    ok(ws, "slack_chat_update", {"channel": "general", "ts": mine["ts"], "text": "fixed"})
    assert ws.slack.history("general")[-1].text == "fixed"
    theirs = next(m for m in ws.slack.history("general") if m.user != ws.me.slack_user_id)
    assert slack_err(ws, "slack_chat_delete", {"channel": "general", "ts": theirs.ts}) == "cant_delete_message"
    ok(ws, "slack_reactions_add", {"channel": "general", "timestamp": theirs.ts, "name": ":eyes:"})
    assert slack_err(ws, "slack_reactions_add", {"channel": "general", "timestamp": theirs.ts, "name": "eyes"}) \
        == "already_reacted"
    assert slack_err(ws, "slack_reactions_add", {"channel": "general", "timestamp": "1.2", "name": "eyes"}) \
        == "message_not_found"
    ok(ws, "slack_chat_delete", {"channel": "general", "ts": mine["ts"]})
    assert all(m.ts != mine["ts"] for m in ws.slack.history("general"))


def test_channel_create_join_invite(ws):
    assert slack_err(ws, "slack_conversations_create", {"name": "Has Spaces"}) == "invalid_name"
    c = ok(ws, "slack_conversations_create", {"name": "launch-team"})["channel"]
    assert slack_err(ws, "slack_conversations_invite", {"channel": c["id"], "users": "UNOPE"}) == "user_not_found"
    before = ws.state_hash()
    uid = ws.directory[2].slack_user_id
    assert slack_err(ws, "slack_conversations_invite", {"channel": c["id"], "users": f"{uid},UNOPE"}) == "user_not_found"
    assert ws.state_hash() == before  # no half-applied invite
    ok(ws, "slack_conversations_invite", {"channel": c["id"], "users": uid})
    sales = next(x for x in ws.slack.db.channels.values() if x.name == "sales")
    if ws.me.slack_user_id not in sales.members:
        assert slack_err(ws, "slack_chat_postMessage", {"channel": "sales", "text": "x"}) == "not_in_channel"
        ok(ws, "slack_conversations_join", {"channel": sales.id})
    assert ok(ws, "slack_chat_postMessage", {"channel": "sales", "text": "x"})["channel"] == sales.id


# -- admin --------------------------------------------------------------------------------------------------
def test_admin_query_grammar_and_ordering(ws):
    users = ok(ws, "admin_users_list", {"query": "isAdmin=true"})["users"]
    assert ws.me.email in {u["primaryEmail"] for u in users}
    p = ws.directory[7]
    found = ok(ws, "admin_users_list", {"query": f"email:{p.email[:4]}*"})["users"]
    assert p.email in {u["primaryEmail"] for u in found}
    assert ok(ws, "admin_users_list", {"query": f"orgUnitPath=/{p.department}"})["users"]
    names = [u["primaryEmail"] for u in ok(ws, "admin_users_list", {"orderBy": "email"})["users"]]
    assert names == sorted(names)
    assert call_tool(ws, "admin_users_list", {"query": "bogusField:1"})["error"]["error"]["code"] == 400


def test_revoking_tokens_and_app_passwords_and_suspending(ws):
    victim = ws.directory[9].email
    t = ws.admin.add_token(victim, display_text="Sketchy Mail Helper", scopes=["https://mail.google.com/"])
    a = ws.admin.add_asp(victim, name="Old phone", created=ws.now - timedelta(days=300))
    ws.snapshot("seed")  # planted items are part of the task's start state
    items = ok(ws, "admin_tokens_list", {"userKey": victim})["items"]
    assert t.clientId in {i["clientId"] for i in items}
    ok(ws, "admin_tokens_delete", {"userKey": victim, "clientId": t.clientId})
    assert call_tool(ws, "admin_tokens_delete", {"userKey": victim, "clientId": t.clientId})["error"]["error"]["code"] == 404
    asps = ok(ws, "admin_asps_list", {"userKey": victim})["items"]
    assert [x["codeId"] for x in asps if x["name"] == "Old phone"] == [a.codeId]
    ok(ws, "admin_asps_delete", {"userKey": victim, "codeId": a.codeId})
    ok(ws, "admin_users_update", {"userKey": victim, "body": {"suspended": True, "changePasswordAtNextLogin": True}})
    ok(ws, "admin_users_signOut", {"userKey": victim})
    u = ok(ws, "admin_users_get", {"userKey": ws.admin.user_id(victim)})
    assert u["suspended"] and u["changePasswordAtNextLogin"] and u["suspensionReason"] == "ADMIN"
    d = ws.diff()["admin"]
    assert set(d) == {"tokens", "asps", "users"}
    assert list(d["tokens"]["deleted"].values())[0]["displayText"] == "Sketchy Mail Helper"
    assert list(d["users"]["updated"].values())[0]["after"]["suspended"] is True


def test_users_insert_conflicts_and_delete_cascades(ws):
    body = {"primaryEmail": f"new.hire@{ws.domain}", "name": {"givenName": "New", "familyName": "Hire"},
            "password": "correct horse battery"}
    ok(ws, "admin_users_insert", {"body": body})
    assert call_tool(ws, "admin_users_insert", {"body": body})["error"]["error"]["code"] == 409
    assert call_tool(ws, "admin_users_insert", {"body": {**body, "primaryEmail": "x@other.com"}})["ok"] is False
    victim = ws.directory[10].email
    uid = ws.admin.user_id(victim)
    ws.admin.add_token(victim, display_text="Zoom", scopes=["openid"])
    ok(ws, "admin_users_delete", {"userKey": victim})
    assert not any(t.userId == uid for t in ws.admin.db.tokens.values())
    assert not any(m.id == uid for m in ws.admin.db.members.values())
    assert call_tool(ws, "admin_users_delete", {"userKey": ws.me.email})["ok"] is False


def test_backup_codes_and_groups(ws):
    p = ws.directory[3].email
    ok(ws, "admin_verificationCodes_generate", {"userKey": p})
    codes = ok(ws, "admin_verificationCodes_list", {"userKey": p})["items"]
    assert len(codes) == 10 and all(len(c["verificationCode"]) == 8 for c in codes)
    ok(ws, "admin_verificationCodes_invalidate", {"userKey": p})
    assert ok(ws, "admin_verificationCodes_list", {"userKey": p})["items"] == []
    g = ok(ws, "admin_groups_insert", {"body": {"email": f"launch@{ws.domain}", "name": "Launch"}})
    ok(ws, "admin_members_insert", {"groupKey": g["email"], "body": {"email": p, "role": "OWNER"}})
    assert call_tool(ws, "admin_members_insert", {"groupKey": g["id"], "body": {"email": p}})["error"]["error"]["code"] == 409
    assert ok(ws, "admin_groups_get", {"groupKey": g["id"]})["directMembersCount"] == "1"
    mine = {x["email"] for x in ok(ws, "admin_groups_list", {"userKey": p})["groups"]}
    assert f"launch@{ws.domain}" in mine
    ok(ws, "admin_members_delete", {"groupKey": g["email"], "memberKey": p})
    assert ok(ws, "admin_members_list", {"groupKey": g["id"]})["members"] == []
