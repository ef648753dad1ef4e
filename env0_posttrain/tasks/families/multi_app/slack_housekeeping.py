"""Multi-app family, Slack housekeeping: pin the decision, set a reminder, reorganise channels, set a status,
schedule a post. These need the pins, reminders, conversations.rename/setTopic/archive, users.profile and
chat.scheduleMessage tools."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.multi_app.common import HISTORY, POST, reg
from env0_posttrain.tasks.families.slack_support import mentions, my_channels, plant_post
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import PHRASES

DECISIONS = ("we ship v2 on Thursday", "the offsite moves to Lisbon", "we freeze hiring until Q3",
             "support moves to a follow-the-sun rota", "we drop the legacy API in June", "Maria leads the audit",
             "the pricing page goes live Monday", "we keep the on-call rota as it is")
CHATTER = ("Any thoughts on this?", "Notes from today are in the doc.", "Can someone review my PR?",
           "Reminder: retro at 4.")
TODOS = ("send the board deck", "book the venue", "review the Q2 budget", "call the vendor back", "renew the domain",
         "file the expense report", "update the roadmap", "check the backup logs")
WHEN = {"in 30 minutes": ("rel", 1800), "in 1 hour": ("rel", 3600), "in 2 hours": ("rel", 7200),
        "in 3 hours": ("rel", 10800), "tomorrow at 9am": ("tomorrow", 9), "tomorrow at 2pm": ("tomorrow", 14)}
PROJECTS = ("apollo", "borealis", "cobalt", "ember", "falcon", "granite", "juniper", "lumen", "mistral", "nimbus")
TOPICS = ("Launch checklist and owners", "Weekly status, Fridays", "Design reviews only", "Bugs and triage")
STATUSES = (("In a meeting", ":calendar:"), ("Out sick", ":face_with_thermometer:"), ("On vacation", ":palm_tree:"),
            ("Commuting", ":bus:"), ("Heads down", ":headphones:"), ("At the offsite", ":airplane:"))
PIN, REMIND, RENAME, TOPIC, ARCHIVE = ("slack_pins_add", "slack_reminders_add", "slack_conversations_rename",
                                       "slack_conversations_setTopic", "slack_conversations_archive")
SCHEDULE, PROFILE = "slack_chat_scheduleMessage", "slack_users_profile_set"


# -- pin the decision ----------------------------------------------------------------------------------------

def _sample_pin(rng: random.Random, ws: Any) -> dict[str, Any]:
    a, b = pick_people(rng, ws, 2)
    return {**person_params(a), **person_params(b, "other_"), "channel": rng.choice(my_channels(ws)),
            "decision": rng.choice(DECISIONS), "chatter": rng.choice(CHATTER)}


def _plant_pin(ws: Any, p: dict[str, Any]) -> None:
    kept = plant_post(ws, p["channel"], p["other_email"], "Welcome! Channel guide is in the topic.", hours=30)
    ws.slack.pin(p["channel"], kept.ts)  # an older pin that must stay
    plant_post(ws, p["channel"], p["email"], f"Decision: {p['decision']}.", hours=3)
    plant_post(ws, p["channel"], p["email"], p["chatter"], hours=2)
    plant_post(ws, p["channel"], p["other_email"], f"Not sure {p['decision']} is final yet?", hours=1)


def _solve_pin(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    uid = ws.person(p["email"]).slack_user_id
    msgs = s(HISTORY, channel=f"#{p['channel']}")["messages"]
    m = next(m for m in msgs if m["user"] == uid and m["text"].startswith("Decision:"))
    s(PIN, channel=f"#{p['channel']}", timestamp=m["ts"])
    return s.calls


def _judge_pin(j: Judge, p: dict[str, Any]) -> None:
    before = {m.ts for m in j.start.slack.pinned(p["channel"])}
    after = {m.ts for m in j.end.slack.pinned(p["channel"])}
    uid = j.start.person(p["email"]).slack_user_id
    decision = [m.ts for m in j.start.slack.history(p["channel"]) if m.user == uid and m.text.startswith("Decision:")]
    j.check("pinned", bool(decision) and decision[-1] in after)
    j.guard("other_pins_kept", before <= after and after - before <= set(decision[-1:]), f"pins {sorted(after)}")
    standard_gates(j)


reg("multi_slack_pin_decision",
    ("Pin the decision {first} posted in #{channel}.", "{name} announced a decision in #{channel}; pin that message.",
     "Make sure the message where {first} says {decision} is pinned in #{channel}."),
    _sample_pin, _solve_pin, _judge_pin, (HISTORY, PIN), ("slack_pins_list", "slack_pins_remove", POST),
    plant=_plant_pin)


# -- set a reminder ------------------------------------------------------------------------------------------

def expected_time(ws: Any, when: str) -> int:
    kind, n = WHEN[when]
    now = ws.now
    if kind == "rel":
        return int(now.timestamp()) + n
    tz = ws.slack.db.users[ws.slack.me].tz
    local = now.astimezone(ZoneInfo(tz))
    return int((local.replace(hour=n, minute=0, second=0, microsecond=0) + timedelta(days=1)).timestamp())


def _sample_remind(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {"when": rng.choice(sorted(WHEN)), "todo": rng.choice(TODOS)}


def _solve_remind(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s(REMIND, text=p["todo"], time=p["when"])
    return s.calls


def _judge_remind(j: Judge, p: dict[str, Any]) -> None:
    me, want = j.end.slack.me, expected_time(j.end, p["when"])
    new = [r for k, r in j.end.slack.db.reminders.items() if k not in j.start.slack.db.reminders and r.user == me]
    hits = [r for r in new if mentions(r.text, p["todo"])]
    j.check("reminder_set", bool(hits))
    j.check("right_time", any(abs(r.time - want) <= 60 and not r.recurring for r in hits),
            f"times {[r.time for r in hits]}, wanted {want}")
    standard_gates(j)


reg("multi_slack_remind_me",
    ("Remind me {when} to {todo}.", "Set a Slack reminder {when}: {todo}.", "I need a nudge {when} to {todo}."),
    _sample_remind, _solve_remind, _judge_remind, (REMIND,), ("slack_reminders_list", POST))


# -- channel reorganisation ----------------------------------------------------------------------------------

def _sample_reorg(rng: random.Random, ws: Any) -> dict[str, Any]:
    a, b = rng.sample(PROJECTS, 2)
    return {"old": f"proj-{a}", "new": f"{a}-launch", "stale": f"proj-{b}", "topic": rng.choice(TOPICS)}


def _plant_reorg(ws: Any, p: dict[str, Any]) -> None:
    me = ws.me.slack_user_id
    mates = [x.slack_user_id for x in ws.directory[1:4] if x.slack_user_id != me]
    ws.slack.add_channel(p["old"], members=[me, *mates], creator=me, topic="TBD")
    stale = ws.slack.add_channel(p["stale"], members=[me, *mates[:1]], creator=me)
    ws.slack.add_message(stale.id, user=me, text="Wrapping this project up.", when=ws.now - timedelta(days=20))


def _solve_reorg(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    cid = s(RENAME, channel=f"#{p['old']}", name=p["new"])["channel"]["id"]
    s(TOPIC, channel=cid, topic=p["topic"])
    s(ARCHIVE, channel=f"#{p['stale']}")
    return s.calls


def _judge_reorg(j: Judge, p: dict[str, Any]) -> None:
    old, stale = j.start.slack.channel_by_name(p["old"]), j.start.slack.channel_by_name(p["stale"])
    now_old, now_stale = j.end.slack.db.channels.get(old.id), j.end.slack.db.channels.get(stale.id)
    j.check("renamed", now_old is not None and now_old.name == p["new"])
    j.check("topic", now_old is not None and now_old.topic.strip() == p["topic"])
    j.check("archived", now_stale is not None and now_stale.is_archived)
    j.guard("renamed_kept_open", now_old is not None and not now_old.is_archived and now_old.members == old.members)
    rest = {k for k in j.start.slack.db.channels if k not in (old.id, stale.id)}
    j.guard("other_channels_untouched", all(j.start.slack.db.channels[k] == j.end.slack.db.channels.get(k)
                                            for k in rest))
    standard_gates(j, may_remove={f"archive:{stale.id}"})


reg("multi_slack_channel_reorg",
    ("Rename #{old} to #{new}, set its topic to \"{topic}\", and archive #{stale}.",
     "Channel cleanup: #{stale} is done, archive it; #{old} becomes #{new} with the topic \"{topic}\".",
     "Please archive #{stale}, then rename #{old} to {new} and give it the topic: {topic}"),
    _sample_reorg, _solve_reorg, _judge_reorg, (RENAME, TOPIC, ARCHIVE),
    ("slack_conversations_list", "slack_conversations_setPurpose", "slack_conversations_leave"), plant=_plant_reorg)


# -- status ----------------------------------------------------------------------------------------------------

def _sample_status(rng: random.Random, ws: Any) -> dict[str, Any]:
    text, emoji = rng.choice(STATUSES)
    return {"status": text, "emoji": emoji}


def _solve_status(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s(PROFILE, profile={"status_text": p["status"], "status_emoji": p["emoji"]})
    return s.calls


def _judge_status(j: Judge, p: dict[str, Any]) -> None:
    u = j.end.slack.db.users[j.end.slack.me]
    j.check("status_text", (u.status_text or "").strip().lower() == p["status"].lower())
    j.check("status_emoji", u.status_emoji == p["emoji"])
    standard_gates(j)


reg("multi_slack_set_status",
    ("Set my Slack status to \"{status}\" with {emoji}.", "Update my Slack status: {status} {emoji}."),
    _sample_status, _solve_status, _judge_status, (PROFILE,), ("slack_users_profile_get", POST))


# -- schedule a post -------------------------------------------------------------------------------------------

def _sample_schedule(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {"channel": rng.choice(my_channels(ws)), "phrase": rng.choice(PHRASES), "hour": rng.choice([8, 9, 10, 14])}


def _post_at(ws: Any, hour: int) -> int:
    day = ws.now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return int(day.replace(hour=hour).timestamp())


def _solve_schedule(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s(SCHEDULE, channel=f"#{p['channel']}", post_at=str(_post_at(ws, p["hour"])), text=p["phrase"])
    return s.calls


def _judge_schedule(j: Judge, p: dict[str, Any]) -> None:
    c = j.end.slack.channel_by_name(p["channel"])
    new = [s for k, s in j.end.slack.db.scheduled.items() if k not in j.start.slack.db.scheduled and s.channel == c.id]
    hits = [s for s in new if mentions(s.text, p["phrase"])]
    j.check("scheduled", bool(hits))
    j.check("right_time", any(s.post_at == _post_at(j.end, p["hour"]) for s in hits))
    j.guard("not_posted_now", not [k for k in j.end.slack.db.messages if k not in j.start.slack.db.messages])
    standard_gates(j, audience={f"#{p['channel']}"})


reg("multi_slack_schedule_post",
    ("Schedule \"{phrase}\" to post in #{channel} tomorrow at {hour}:00 UTC.",
     "Tomorrow at {hour}:00 UTC, #{channel} should get the message \"{phrase}\"; schedule it now."),
    _sample_schedule, _solve_schedule, _judge_schedule, (SCHEDULE,), (POST, "slack_chat_scheduledMessages_list"))
