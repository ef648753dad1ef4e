"""The tiny student's pre-training corpus comes from the real workspace and never shows a tool call."""

from __future__ import annotations

import json

import pytest

from env0_posttrain.tasks import (
    build_workspace,
    generate_tasks,
    starter_template_ids,
    verify,
)
from env0_posttrain.train.student_corpus import oracle_row, plain_reply, student_corpus
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
    assert chats and all(m.get("tool_calls") is None for c in chats for m in c["messages"])
    assert {c["messages"][1]["content"] for c in chats} == {t.instruction for t in tasks}
    assert any("@" in e for e in entities) and set(tasks[0].tools) <= set(entities)
    # every whole token is read in pre-training (the system prompt and tool schemas inside the chats)
    rendered = text + json.dumps([c["tools"] for c in chats])
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
