"""Multi-app family, Slack work: posting in a channel, a direct message, a reaction, a reply in a thread."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.common import Script
from env0_posttrain.tasks.families.multi_app.common import (HISTORY, LOOKUP, POST, judge_dm, reg,
                                                         sample_channel, sample_channel_person)
from env0_posttrain.tasks.families.slack_support import find_post, mentions, plant_post, posts_in
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import PHRASES, REACTIONS


# -- Slack ---------------------------------------------------------------------------------------

def _solve_post(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s(POST, channel=f"#{p['channel']}", text=p["phrase"])
    return s.calls


def _judge_post(j: Judge, p: dict[str, Any]) -> None:
    j.check("posted", any(mentions(m.text, p["phrase"]) for m in posts_in(j.start, j.end, p["channel"])))
    standard_gates(j, audience={f"#{p['channel']}"})


reg("multi_slack_post_in_channel", ('Post "{phrase}" in #{channel}.', 'Tell #{channel} on Slack: {phrase}.',
                                    'Let the #{channel} channel know that {phrase}.'),
    sample_channel, _solve_post, _judge_post, (POST,), ("slack_conversations_list", HISTORY), starter=True)


def _solve_dm(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    uid = s(LOOKUP, email=p["email"])["user"]["id"]
    s(POST, channel=uid, text=p["phrase"])
    return s.calls


reg("multi_slack_dm_person", ('Send {name} a Slack DM saying "{phrase}".', 'Message {first} directly on Slack: {phrase}.'),
    sample_channel_person, _solve_dm, judge_dm, (LOOKUP, POST), ("slack_users_list",), starter=True)


def _sample_react(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_channel_person(rng, ws), "emoji": rng.choice(REACTIONS)}


def _plant_said(ws: Any, p: dict[str, Any]) -> None:
    plant_post(ws, p["channel"], p["email"], p["phrase"])


def _latest_by(s: Script, ws: Any, channel: str, email: str) -> dict[str, Any]:
    uid = ws.person(email).slack_user_id
    return next(m for m in s(HISTORY, channel=f"#{channel}")["messages"] if m["user"] == uid)


def _solve_react(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    m = _latest_by(s, ws, p["channel"], p["email"])
    s("slack_reactions_add", channel=f"#{p['channel']}", timestamp=m["ts"], name=p["emoji"])
    return s.calls


def _judge_react(j: Judge, p: dict[str, Any]) -> None:
    m = find_post(j.start, p["channel"], p["email"], p["phrase"])
    after = j.end.slack.db.messages.get(f"{m.channel}/{m.ts}")
    me = j.start.me.slack_user_id
    j.check("reacted", after is not None and any(r.name == p["emoji"] and me in r.users for r in after.reactions))
    standard_gates(j)


reg("multi_slack_react", ("React with :{emoji}: to {name}'s latest message in #{channel}.",
                          "Add a {emoji} reaction to what {first} just posted in #{channel}."),
    _sample_react, _solve_react, _judge_react, (HISTORY, "slack_reactions_add"), (POST,), plant=_plant_said, starter=True)


def _sample_thread(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_channel_person(rng, ws)
    p["reply"] = rng.choice([x for x in PHRASES if x != p["phrase"]])
    return p


def _solve_thread(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    m = _latest_by(s, ws, p["channel"], p["email"])
    s(POST, channel=f"#{p['channel']}", text=p["reply"], thread_ts=m["ts"])
    return s.calls


def _judge_thread(j: Judge, p: dict[str, Any]) -> None:
    parent = find_post(j.start, p["channel"], p["email"], p["phrase"])
    replies = [m for m in posts_in(j.start, j.end, p["channel"]) if m.thread_ts == parent.ts]
    j.check("in_thread", bool(replies))
    j.check("text", any(mentions(m.text, p["reply"]) for m in replies))
    standard_gates(j, audience={f"#{p['channel']}"})


reg("multi_slack_reply_in_thread", ('Reply in the thread of {name}\'s latest #{channel} message: "{reply}".',
                                    'Answer {first} in #{channel}, in their thread, with "{reply}".'),
    _sample_thread, _solve_thread, _judge_thread, (HISTORY, POST), ("slack_reactions_add",), plant=_plant_said)


