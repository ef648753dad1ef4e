"""The tiny student's pre-training corpus comes from the real workspace and never shows a tool call."""

from __future__ import annotations

import json
import random

import pytest

from env0_posttrain.tasks import (
    build_workspace,
    generate_tasks,
    starter_template_ids,
    verify,
)
from env0_posttrain.spec.runspec import CorpusMix
from env0_posttrain.tasks import company, vocabulary
from env0_posttrain.tasks.vocabulary import entity_classes
from env0_posttrain.train.tiny_student.practice_tools import practice_schemas
from env0_posttrain.train.tiny_student.corpus import (
    copy_drills,
    oracle_row,
    people_emails,
    plain_reply,
    student_corpus,
    swap_entities,
)
from env0_posttrain.workspace import TOOLS


@pytest.fixture(scope="module")
def tasks():
    return generate_tasks(0, templates=starter_template_ids(1)[:6], per_template=2)


def test_corpus_teaches_the_company_but_never_a_call(tasks):
    corpus, entities = student_corpus(tasks)
    text = "\n".join(c if isinstance(c, str) else json.dumps(c) for c in corpus)
    for name in TOOLS:
        assert f"<function={name}>" not in text
    assert "<tool_call>" not in "\n".join(c for c in corpus if isinstance(c, str) and "example_function_name" not in c)
    chats = [c for c in corpus if isinstance(c, dict)]
    workspace_calls = [m for c in chats for m in c["messages"] if m.get("tool_calls")
                       and any(tc["function"]["name"] in TOOLS for tc in m["tool_calls"])]
    assert workspace_calls == []  # calls only ever go to practice tools
    full = [c for c in chats if c["messages"][0]["role"] == "system" and not any(m.get("tool_calls") for m in c["messages"])]
    assert {c["messages"][1]["content"] for c in full} == {t.instruction for t in tasks}
    assert len(chats) > len(full)  # copy drills and practice calls besides the requests themselves
    assert any("@" in e for e in entities) and set(tasks[0].tools) <= set(entities)
    # every whole token is read in pre-training (the system prompt and tool schemas inside the chats)
    rendered = text + json.dumps([c["tools"] for c in full])
    assert all(e in text or json.dumps(e)[1:-1] in rendered or e.startswith("{") for e in entities)
    assert len(entities) == len(set(entities))


def test_plain_reply_copies_entities_in_order_and_resolves_people():
    emails = {"Rosa": "rosa.reyes@acme.test", "Theo Gupta": "theo.gupta@acme.test"}
    entities = ["Rosa", "leadership@acme.test", "Theo Gupta", "Theo", "Heads up"]
    assert plain_reply("Take Rosa out of leadership@acme.test.", entities, emails) == \
        "Noted: Rosa (rosa.reyes@acme.test), leadership@acme.test."
    assert plain_reply('Email Theo Gupta: "Heads up".', entities, emails) == \
        "Noted: Theo Gupta (theo.gupta@acme.test), Heads up."
    assert plain_reply("Nothing known here.", entities, emails) == "Noted."


def test_swap_entities_replaces_whole_entities_within_their_class():
    classes = [["Rosa Reyes", "Theo Gupta"], ["Rosa", "Theo"], ["leadership@acme.test", "sales@acme.test"]]
    rng = random.Random(0)
    seen = set()
    for _ in range(40):
        out = swap_entities("Take Rosa Reyes out of leadership@acme.test; tell Rosa.", classes, rng)
        # the full name is one entity (longest match first), never "<first> Reyes"
        assert out.split(" out of ")[0].removeprefix("Take ") in classes[0]
        assert out.split(" out of ")[1].split(";")[0] in classes[2]
        assert out.endswith((" Rosa.", " Theo."))
        seen.add(out)
    assert len(seen) > 4
    assert swap_entities("no entity here", classes, rng) == "no entity here"


def test_copy_drills_repeat_the_swapped_request_and_never_show_a_call(tasks):
    ws = company()
    entities = vocabulary(ws)
    drills = copy_drills(tasks, ws, entities, 50)
    assert len(drills) == 50
    classes = entity_classes(ws)
    assert all(len(c) > 1 for c in classes.values()) and all("@" in e for e in classes["person_email"])
    asked = {d["messages"][0]["content"] for d in drills}
    assert len(asked - {t.instruction for t in tasks}) > 20  # mostly requests the training set does not hold
    for d in drills:
        user, reply = (m["content"] for m in d["messages"])
        assert reply.startswith("Noted") and "<tool_call>" not in reply
        assert reply == plain_reply(user, entities, people_emails(ws))
    assert copy_drills([], ws, entities, 10) == []


def test_corpus_mix_counts_each_kind(tasks):
    small = CorpusMix(request_repeats=1, short_repeats=0, copy_drills=5, repeat_drills=7, directory_repeats=0, practice_calls=0)
    corpus, entities = student_corpus(tasks, small)
    chats = [c for c in corpus if isinstance(c, dict)]
    assert sum(c["messages"][0]["content"].startswith("Repeat: ") for c in chats) == 7
    assert not any(m.get("tool_calls") for c in chats for m in c["messages"])
    assert not any(t["function"]["name"] in entities for t in practice_schemas())  # no practice, no practice tokens
    with_practice, entities = student_corpus(tasks, small.model_copy(update={"practice_calls": 16}))
    assert len(with_practice) >= len(corpus) + 16
    assert {t["function"]["name"] for t in practice_schemas()} <= set(entities)


def test_oracle_rows_replay_the_solution_through_the_workspace(tasks):
    task = tasks[0]
    row = oracle_row(task)
    msgs = row["messages"]
    assert [m["role"] for m in msgs][:2] == ["system", "user"] and msgs[-1] == {"role": "assistant", "content": "Done."}
    calls = [m["tool_calls"][0]["function"] for m in msgs if m.get("tool_calls")]
    assert [c["name"] for c in calls] == [c.name for c in task.oracle]
    assert all(isinstance(c["arguments"], dict) for c in calls)
    assert all(json.loads(m["content"])["ok"] for m in msgs if m["role"] == "tool")
    assert {t["function"]["name"] for t in row["tools"]} == set(task.tools)
    # the replayed calls really solve the task
    start, end = build_workspace(task), build_workspace(task)
    from env0_posttrain.workspace import call_tool

    for c in calls:
        call_tool(end, c["name"], c["arguments"])
    assert verify(task, start, end, None).passed
