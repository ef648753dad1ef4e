"""Slack's methods beyond messages and channels, through the official slack_sdk WebClient against the live app (TLS on loopback):
channel housekeeping, pins, reactions, permalinks, ephemeral and scheduled messages, files (v1 upload, the v2
three-step upload, info, list, delete), reminders, team, profile and presence. Each write is checked in the
workspace's state, the diff and the action log; each refusal is Slack's {ok: false, error} and changes nothing."""

from __future__ import annotations

import ssl

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from env0_posttrain_tests.support.live_workspace import reseeded_workspace_fixture, tls_server_fixture


pytestmark = pytest.mark.filterwarnings("ignore")


server = tls_server_fixture()


ws = reseeded_workspace_fixture()


@pytest.fixture()
def client(server, ws):
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return WebClient(token="xoxp-local", base_url=f"{server[0]}/api/", ssl=ctx)


def refused(call, error: str, ws) -> None:
    h0 = ws.state_hash()
    with pytest.raises(SlackApiError) as e:
        call()
    assert e.value.response.status_code == 200 and e.value.response["ok"] is False
    assert e.value.response["error"] == error, e.value.response.data
    assert ws.state_hash() == h0


def general(client) -> str:
    return next(c["id"] for c in client.conversations_list()["channels"] if c["name"] == "general")


def test_channel_housekeeping(client, ws):
    new = client.conversations_create(name="proj-x")["channel"]["id"]
    assert client.conversations_setTopic(channel=new, topic="Ship it")["channel"]["topic"]["value"] == "Ship it"
    assert client.conversations_setPurpose(channel=new, purpose="Launch prep")["channel"]["purpose"]["value"] == \
        "Launch prep"
    assert client.conversations_rename(channel=new, name="proj-y")["channel"]["name"] == "proj-y"
    refused(lambda: client.conversations_setTopic(channel=new, topic="x" * 251), "too_long", ws)
    refused(lambda: client.conversations_rename(channel=new, name="general"), "name_taken", ws)
    refused(lambda: client.conversations_unarchive(channel=new), "not_archived", ws)
    client.conversations_archive(channel=new)
    refused(lambda: client.conversations_setPurpose(channel=new, purpose="p"), "is_archived", ws)
    client.conversations_unarchive(channel=new)
    colleague = ws.directory[3].slack_user_id
    client.conversations_invite(channel=new, users=colleague)
    client.conversations_leave(channel=new)
    c = ws.slack.db.channels[new]
    assert (c.name, c.topic, c.purpose, c.is_archived, c.members) == ("proj-y", "Ship it", "Launch prep", False,
                                                                      (colleague,))
    refused(lambda: client.conversations_leave(channel=general(client)), "cant_leave_general", ws)
    assert [(e["tool"], e["ok"]) for e in ws.log("slack")][-4:] == [
        ("slack_conversations_invite", True), ("slack_conversations_leave", True), ("slack_conversations_list", True),
        ("slack_conversations_leave", False)]


def test_pins_reactions_permalink_ephemeral(client, ws):
    cid = general(client)
    ts = client.chat_postMessage(channel=cid, text="Decision: we ship Friday")["ts"]
    client.pins_add(channel=cid, timestamp=ts)
    assert [i["message"]["ts"] for i in client.pins_list(channel=cid)["items"]] == [ts]
    client.pins_remove(channel=cid, timestamp=ts)
    assert client.pins_list(channel=cid)["items"] == []
    refused(lambda: client.pins_remove(channel=cid, timestamp=ts), "no_pin", ws)
    client.reactions_add(channel=cid, timestamp=ts, name="rocket")
    items = client.reactions_list()["items"]
    assert items[0]["message"]["ts"] == ts and items[0]["message"]["reactions"][0]["name"] == "rocket"
    client.reactions_remove(channel=cid, timestamp=ts, name="rocket")
    assert "reactions" not in client.reactions_get(channel=cid, timestamp=ts)["message"]
    refused(lambda: client.reactions_remove(channel=cid, timestamp=ts, name="rocket"), "no_reaction", ws)
    link = client.chat_getPermalink(channel=cid, message_ts=ts)["permalink"]
    assert link.endswith(f"/archives/{cid}/p{ts.replace('.', '')}")
    h0 = ws.state_hash()
    assert client.chat_postEphemeral(channel=cid, user=ws.directory[3].slack_user_id, text="psst")["message_ts"]
    assert ws.state_hash() == h0, "an ephemeral message is not stored"
    refused(lambda: client.chat_postEphemeral(channel=cid, user="U_NOBODY", text="x"), "user_not_in_channel", ws)


def test_scheduled_messages(client, ws):
    cid = general(client)
    now = int(ws.now.timestamp())
    sid = client.chat_scheduleMessage(channel=cid, post_at=now + 3600, text="Reminder: demo at 3")["scheduled_message_id"]
    listed = client.chat_scheduledMessages_list(channel=cid)["scheduled_messages"]
    assert [(s["id"], s["post_at"], s["text"]) for s in listed] == [(sid, now + 3600, "Reminder: demo at 3")]
    assert ws.slack.db.scheduled[sid].channel == cid
    refused(lambda: client.chat_scheduleMessage(channel=cid, post_at=now - 5, text="x"), "time_in_past", ws)
    refused(lambda: client.chat_scheduleMessage(channel=cid, post_at=now + 200 * 86400, text="x"), "time_too_far", ws)
    client.chat_deleteScheduledMessage(channel=cid, scheduled_message_id=sid)
    assert client.chat_scheduledMessages_list()["scheduled_messages"] == []
    refused(lambda: client.chat_deleteScheduledMessage(channel=cid, scheduled_message_id=sid),
            "invalid_scheduled_message_id", ws)


def test_files_v1_and_v2_uploads_info_list_delete(client, ws):
    cid = general(client)
    up = client.files_upload(content="# Plan\nstep 1\n", filename="plan.md", channels=cid, initial_comment="the plan")
    fid = up["file"]["id"]
    assert up["file"]["filetype"] == "markdown" and up["file"]["channels"] == [cid]
    info = client.files_info(file=fid)
    assert info["content"] == "# Plan\nstep 1\n" and info["file"]["name"] == "plan.md"
    raw = client.files_upload(file=b"a,b\n1,2\n", filename="data.csv", title="Data")  # multipart/form-data
    assert ws.slack.db.files[raw["file"]["id"]].content == "a,b\n1,2\n"
    v2 = client.files_upload_v2(content="hello v2", filename="notes.txt", title="Notes", channel=cid,
                                initial_comment="uploaded")
    f2 = v2["file"]["id"]
    assert ws.slack.db.files[f2].content == "hello v2" and ws.slack.db.files[f2].pending is None
    assert client.files_info(file=f2)["file"]["title"] == "Notes"
    listed = client.files_list(channel=cid)["files"]
    assert {f["id"] for f in listed} == {fid, f2}
    shared = client.conversations_history(channel=cid, limit=1)["messages"][0]
    assert shared["text"] == "uploaded" and shared["files"][0]["id"] == f2
    client.files_delete(file=fid)
    refused(lambda: client.files_info(file=fid), "file_not_found", ws)
    refused(lambda: client.files_list(types="bogus"), "unknown_type", ws)
    pending = client.files_getUploadURLExternal(filename="x.txt", length=3)["file_id"]
    refused(lambda: client.files_completeUploadExternal(files=[{"id": pending, "title": "x"}]), "file_not_found", ws)
    assert set(ws.diff()["slack"]["files"]["added"]) == {raw["file"]["id"], f2, pending}


def test_reminders(client, ws):
    r = client.reminders_add(text="Send the board deck", time="tomorrow at 9am")["reminder"]
    assert r["time"] > ws.now.timestamp() and r["complete_ts"] == 0 and r["recurring"] is False
    soon = client.reminders_add(text="Stand up", time="in 15 minutes")["reminder"]
    assert soon["time"] == int(ws.now.timestamp()) + 900
    assert [x["id"] for x in client.reminders_list()["reminders"]] == [soon["id"], r["id"]]
    client.reminders_complete(reminder=r["id"])
    assert client.reminders_info(reminder=r["id"])["reminder"]["complete_ts"] == int(ws.now.timestamp())
    client.reminders_delete(reminder=soon["id"])
    refused(lambda: client.reminders_info(reminder=soon["id"]), "not_found", ws)
    refused(lambda: client.reminders_add(text="x", time="when pigs fly"), "cannot_parse", ws)
    assert list(ws.slack.db.reminders) == [r["id"]]


def test_team_profile_presence(client, ws):
    team = client.team_info()["team"]
    assert team["id"] == client.auth_test()["team_id"] and team["email_domain"] == ws.domain
    prof = client.users_profile_set(profile={"status_text": "Heads down", "status_emoji": ":headphones:"})["profile"]
    assert (prof["status_text"], prof["status_emoji"]) == ("Heads down", ":headphones:")
    assert client.users_profile_get()["profile"]["status_text"] == "Heads down"
    assert client.users_info(user=ws.me.slack_user_id)["user"]["profile"]["status_emoji"] == ":headphones:"
    refused(lambda: client.users_profile_set(profile={"favourite_colour": "blue"}), "invalid_profile", ws)
    assert client.users_getPresence(user=ws.me.slack_user_id)["presence"] == "active"
    client.users_setPresence(presence="away")
    assert client.users_getPresence(user=ws.me.slack_user_id)["presence"] == "away"
    assert client.users_getPresence(user=ws.directory[3].slack_user_id)["presence"] == "active"
    refused(lambda: client.users_setPresence(presence="busy"), "invalid_presence", ws)
    me = ws.slack.db.users[ws.me.slack_user_id]
    assert (me.status_text, me.presence) == ("Heads down", "away")
    ws.reset()
    assert ws.slack.db.users[ws.me.slack_user_id].presence is None
