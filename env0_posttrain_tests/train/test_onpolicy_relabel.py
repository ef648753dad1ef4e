"""Relabelling (the on-policy stage's relabel kind): at every assistant turn of the student's own episode the
teacher is asked for its next message at that state, the row trains on the teacher's tokens only, and a teacher
reply that is not a usable message is a counted error, never a row."""

from __future__ import annotations

import asyncio

import pytest

from env0_posttrain.agent import AgentSettings, run_episode
from env0_posttrain.agent.endpoint import oracle_endpoint
from env0_posttrain.agent.providers.oracle import episode_plan_seed, state_turn
from env0_posttrain.sft.rows import to_trl_message
from env0_posttrain.sft.tokens import render_ids
from env0_posttrain.train.onpolicy_relabel import relabel_rows, same_message, teacher_message_problem
from env0_posttrain_tests.support.agent import NotesEnv, build_tiny_student, notes_task

SETTINGS = AgentSettings(max_steps=6, backoff_base_s=0, concurrency=8)
TASKS = {t.id: t for t in (notes_task(i) for i in range(1, 7))}


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from transformers import AutoTokenizer

    path = tmp_path_factory.mktemp("tiny-relabel")
    build_tiny_student(path)
    return AutoTokenizer.from_pretrained(str(path))


def _student_episodes(skill: float) -> list:
    """An erring player stands in for the student: its episodes hold wrong calls, failed calls and early stops."""
    async def every():
        return await asyncio.gather(*(run_episode(t, oracle_endpoint(skill, seed=5), SETTINGS, "onpolicy", 0, "r",
                                                  env=NotesEnv()) for t in TASKS.values()))
    return asyncio.run(every())


def test_every_turn_gets_the_teachers_message_at_the_students_state(tokenizer):
    episodes = _student_episodes(0.4)
    assert not all(e.passed for e in episodes)
    rows, items, stats = relabel_rows(episodes, TASKS, oracle_endpoint(1.0, seed=9), SETTINGS, "r", tokenizer, 4)
    assert stats.turns == sum(len(e.exchanges) for e in episodes) == len(items) and stats.teacher_errors == 0
    assert stats.rows == len(rows) == stats.turns  # a perfect teacher's every reply is a row
    by_key = {(e.task_id, e.trial): e for e in episodes}
    for item, row in zip(items, rows, strict=True):
        ep = by_key[(item.task_id, item.trial)]
        state = ep.messages[: item.request_len]
        want = state_turn(TASKS[item.task_id], state, 1.0, episode_plan_seed(0, "r", item.task_id, 0))
        assert same_message(item.teacher, want.message("x"))  # the answer at the student's state, not along a plan
        assert item.agrees == same_message(item.student, item.teacher)
        prompt = render_ids([to_trl_message(m) for m in state], ep.tools, tokenizer, add_generation_prompt=True)
        n = len(prompt)
        assert row["input_ids"][:n] == prompt and row["completion_mask"] == [0] * n + [1] * (len(row["input_ids"]) - n)
        trained = tokenizer.decode(row["input_ids"][n:])
        assert trained.endswith("<|im_end|>")
        if want.name:
            assert "notes_create" in trained and str(want.arguments and eval_title(want.arguments)) in trained
        else:
            assert trained.startswith("Done.")
    assert 0 < stats.agreements < stats.turns and stats.agreement == stats.agreements / stats.turns


def eval_title(arguments: str) -> str:
    import json

    return json.loads(arguments)["title"]


def test_unusable_teacher_replies_are_counted_errors_never_rows(tokenizer):
    episodes = _student_episodes(0.4)
    rows, items, stats = relabel_rows(episodes, TASKS, oracle_endpoint(0.0, seed=9), SETTINGS, "r", tokenizer, 4)
    assert stats.teacher_errors > 0 and set(stats.errors) <= {"unknown_tool", "malformed_call"}
    assert stats.rows + stats.teacher_errors == stats.turns == len(items)
    assert all(i.teacher is None and i.error for i in items if i.error)
    offered = {t["function"]["name"] for t in episodes[0].tools}
    assert all(teacher_message_problem(i.teacher, offered) is None for i in items if i.teacher is not None)


def test_teacher_message_problems():
    offered = {"notes_create"}

    def call(name, args):
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": args}}]}

    assert teacher_message_problem(call("notes_create", '{"title": "a"}'), offered) is None
    assert teacher_message_problem(call("notes_create", ""), offered) is None
    assert teacher_message_problem(call("notes_drop", "{}"), offered) == "unknown_tool"
    assert teacher_message_problem(call("notes_create", '{"title": '), offered) == "malformed_call"
    assert teacher_message_problem(call("notes_create", "[1, 2]"), offered) == "malformed_call"
    assert teacher_message_problem({"role": "assistant", "content": "  "}, offered) == "empty_reply"
    assert teacher_message_problem({"role": "assistant", "content": "Done."}, offered) is None
    assert same_message(call("notes_create", '{"a": 1, "b": 2}'), call("notes_create", '{"b": 2, "a": 1}'))
    assert not same_message(call("notes_create", '{"a": 1}'), {"role": "assistant", "content": "Done."})


def test_sft_rows_join_as_one_token_row_per_teacher_turn(tokenizer):
    from env0_posttrain.train.onpolicy_relabel import sft_token_rows

    [ep] = _student_episodes(1.0)[:1]
    trl_row = {"messages": ep.messages, "tools": __import__("json").dumps(ep.tools)}
    rows = sft_token_rows([trl_row, {"input_ids": [1, 2, 3], "labels": [-100, 2, 3]}, {"bad": 1}], tokenizer)
    turns = sum(1 for m in ep.messages if m["role"] == "assistant")
    assert len(rows) == turns + 1 and rows[-1] == {"input_ids": [1, 2, 3], "labels": [-100, 2, 3]}
    for row in rows[:-1]:
        trained = tokenizer.decode([t for t, m in zip(row["input_ids"], row["completion_mask"], strict=True) if m])
        assert trained.endswith("<|im_end|>") and "<|im_start|>" not in trained
