"""The offline teacher asked at any state of a conversation (the on-policy stage's relabelling): the solution steps
already done are found from the calls and their results, and the answer is the first step not done."""

from __future__ import annotations

import json

from env0_posttrain.agent.providers.oracle import state_turn, steps_done
from env0_posttrain_tests.support.agent import notes_task

TASK = notes_task(1)  # two steps: create "note 1-a", then "note 1-b"; final answer "Done."
START = [{"role": "system", "content": "s"}, {"role": "user", "content": TASK.instruction}]


def _call(i: int, name: str, args: dict | str, result: dict) -> list[dict]:
    raw = args if isinstance(args, str) else json.dumps(args)
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": raw}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": json.dumps(result)}]


OK, FAILED = {"ok": True, "result": {"id": "n1"}}, {"ok": False, "error": {"code": 400, "message": "no"}}
A = {"title": "note 1-a", "body": "body of note 1-a"}
B = {"title": "note 1-b", "body": "body of note 1-b"}


def _answer(messages: list[dict]) -> tuple[str | None, dict | str | None]:
    turn = state_turn(TASK, messages, 1.0, seed=7)
    return turn.name, json.loads(turn.arguments) if turn.arguments else turn.content


def test_a_perfect_teacher_answers_the_first_step_not_done_at_any_state():
    assert _answer(START) == ("notes_create", A)
    assert _answer(START + _call(0, "notes_create", A, OK)) == ("notes_create", B)
    # a failed call did nothing: the same step again
    assert _answer(START + _call(0, "notes_create", A, FAILED)) == ("notes_create", A)
    # the student's wrong arguments are not the step
    assert _answer(START + _call(0, "notes_create", {"title": "note 1-a", "body": "x"}, OK)) == ("notes_create", A)
    # done out of order: the one left; the same arguments in another key order count
    b_reordered = json.dumps({"body": B["body"], "title": B["title"]})
    assert _answer(START + _call(0, "notes_create", b_reordered, OK)) == ("notes_create", A)
    both = START + _call(0, "notes_create", A, OK) + _call(1, "notes_list", {}, OK) + _call(2, "notes_create", B, OK)
    assert _answer(both) == (None, "Done.")
    assert steps_done([("notes_create", A), ("notes_create", B)], both) == [True, True]
    # unparseable arguments and a call without a result are not done
    assert steps_done([("notes_create", A)], START + _call(0, "notes_create", "{bad", OK)) == [False]
    assert steps_done([("notes_create", A)], START + _call(0, "notes_create", A, OK)[:1]) == [False]


def test_a_weak_teacher_errs_per_state_and_the_same_state_gets_the_same_answer():
    states = [START, START + _call(0, "notes_create", A, OK), START + _call(0, "notes_create", B, FAILED)]
    answers = {(i, s): state_turn(TASK, m, 0.0, seed=s) for i, m in enumerate(states) for s in range(12)}
    assert all(t.mistake is not None for t in answers.values())  # skill 0: a mistake every time
    assert len({t.mistake for t in answers.values()}) >= 3
    again = {(i, s): state_turn(TASK, m, 0.0, seed=s) for i, m in enumerate(states) for s in range(12)}
    assert again == answers
    strong = [state_turn(TASK, START, 0.9, seed=s) for s in range(200)]
    assert 0.8 <= sum(t.mistake is None for t in strong) / 200 < 1.0
