"""What the multi-app templates share: the family's registration, the Slack tools they name, picking a channel,
and the checks several of them make."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.common import pick_people, person_params
from env0_posttrain.tasks.families.mail_support import new_sent, recipients_of, text_mentions
from env0_posttrain.tasks.families.slack_support import (
    dms_to, mentions, my_channels,
)
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import PHRASES
from env0_posttrain.tasks.template import Template, register

F = "multi-app"
POST, HISTORY, LOOKUP = "slack_chat_postMessage", "slack_conversations_history", "slack_users_lookupByEmail"


def reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any, tools: tuple[str, ...],
        distractors: tuple[str, ...] = (), plant: Any = None, starter: bool = False, answer: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, starter=starter, answer=answer, **kw))


def check_emailed(j: Judge, email: str, topic: str) -> None:
    """Check "emailed": a mail sent during the task to `email` names `topic` in its subject or body."""
    mails = [m for m in new_sent(j.start, j.end) if email in recipients_of(m)]
    j.check("emailed", any(text_mentions(m.subject + " " + m.body, topic) for m in mails))


def sample_channel(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {"channel": rng.choice(my_channels(ws)), "phrase": rng.choice(PHRASES)}


def sample_channel_person(rng: random.Random, ws: Any) -> dict[str, Any]:
    (p,) = pick_people(rng, ws)
    return {**sample_channel(rng, ws), **person_params(p)}


def judge_dm(j: Judge, p: dict[str, Any]) -> None:
    j.check("sent", any(mentions(m.text, p["phrase"]) for m in dms_to(j.start, j.end, p["email"])))
    standard_gates(j, audience={p["email"]})
