"""Episode metrics, the one-shot first-action eval and the behaviour registry over real Episode records."""

from __future__ import annotations

import pytest

from env0_posttrain.evaluate.behaviours import BEHAVIOURS, behaviour, behaviour_rates, is_write_tool
from env0_posttrain.evaluate.first_action import first_action_eval, score_first_action
from env0_posttrain.evaluate.metrics import (
    arm_metrics,
    check_eval_episodes,
    difficulty_key,
    eval_splits,
    family_key,
    metrics_by,
    split_key,
    task_trials,
)
from env0_posttrain_tests.support.evaluate import make_episode, make_task


@pytest.fixture()
def tasks():
    return [make_task(i, difficulty=1 + i % 3) for i in range(6)]


def test_arm_metrics_counts_everything(tasks):
    eps = [
        make_episode("sft", tasks[0], 0, True),
        make_episode("sft", tasks[1], 0, False, first="message", stop="max_steps", agent_errors=2).model_copy(
            update={"error_counts": {"malformed_call": 1, "unknown_tool": 1}}),
        make_episode("sft", tasks[4], 0, False).model_copy(update={"error_counts": {"malformed_call": 2}}),
        make_episode("sft", tasks[2], 0, False, stop="infra_error", scored=False),
        make_episode("sft", tasks[3], 0, False, scored=False),
    ]
    m = arm_metrics("sft", eps)
    assert (m.n_rows, m.n_tasks, m.trials) == (5, 5, 1)
    assert m.pass_rate.successes == 1 and m.pass_rate.rate == 0.2
    assert m.rows_with_tool_calls == 4
    assert [(u.task_id, u.reason) for u in m.unscored] == [
        (tasks[2].id, "infra_error"), (tasks[3].id, "no verifier result")]
    assert m.mean_reward == pytest.approx((1.0 + 0.25 + 0.25 - 1.0 - 1.0) / 5)  # unscored rows: the minimum, -1
    assert m.mean_steps == pytest.approx(2.0)
    assert m.completion_rate == pytest.approx(3 / 5)
    assert m.format_failure_rate == pytest.approx(2 / 10) and m.rows_with_format_failure == 1
    assert m.error_kinds == {"malformed_call": 3, "unknown_tool": 1}


def test_strict_pass_needs_reward_one(tasks):
    ep = make_episode("base", tasks[0], 0, False)
    assert ep.reward == 0.25 and not ep.passed and arm_metrics("base", [ep]).pass_rate.successes == 0


def test_slices_by_family_difficulty_and_split(tasks):
    eps = [make_episode(arm, t, k, arm == "sft" and k == 0) for arm in ("base", "sft") for t in tasks for k in range(2)]
    by_tasks = {t.id: t for t in tasks}
    fam = metrics_by(eps, family_key(by_tasks))
    assert list(fam) == sorted({t.family for t in tasks})
    assert fam["auth"]["sft"].pass_rate.successes == 1 and fam["auth"]["base"].pass_rate.successes == 0
    diff = metrics_by(eps, difficulty_key(by_tasks))
    assert set(diff) == {"1 calls", "2 calls", "3 calls"} and diff["1 calls"]["sft"].n_rows == 4
    splits = {t.id: ("eval" if i < 4 else "heldout") for i, t in enumerate(tasks)}
    assert eval_splits(eps, splits) == ["eval", "heldout"] and eval_splits(eps, None) == []
    per_split = metrics_by(eps, split_key(splits))
    assert per_split["heldout"]["sft"].n_tasks == 2 and per_split["eval"]["base"].n_rows == 8


def test_task_trials_keeps_trial_order(tasks):
    eps = [make_episode("sft", tasks[0], 1, False), make_episode("sft", tasks[0], 0, True)]
    assert task_trials(eps) == {tasks[0].id: [True, False]}


def test_bad_episodes_are_refused_with_the_row_named(tasks):
    by_tasks = {t.id: t for t in tasks}
    with pytest.raises(ValueError, match=r"episode #0 .*field 'arm'"):
        check_eval_episodes([make_episode("teacher", tasks[0], 0, True)], by_tasks)
    stray = make_episode("sft", make_task(99), 0, True)
    with pytest.raises(ValueError, match=r"episode #1 .*task_id"):
        check_eval_episodes([make_episode("sft", tasks[0], 0, True), stray], by_tasks)
    dup = make_episode("sft", tasks[0], 0, True)
    with pytest.raises(ValueError, match="duplicate"):
        check_eval_episodes([dup, dup], by_tasks)


def test_first_action_scores(tasks):
    t = tasks[1]  # calendar: arguments include an int
    s = score_first_action(make_episode("sft", t, 0, True), t)
    assert (s.format_ok, s.name_match, s.args_match) == (True, True, True)
    s = score_first_action(make_episode("sft", t, 0, True, first="wrong_args"), t)
    assert (s.format_ok, s.name_match, s.args_match) == (True, True, False)
    s = score_first_action(make_episode("sft", t, 0, True, first="wrong_tool"), t)
    assert (s.format_ok, s.name_match, s.args_match) == (True, False, False) and s.called == "drive_files_update"
    s = score_first_action(make_episode("sft", t, 0, True, first="message"), t)
    assert (s.format_ok, s.name_match, s.called) == (False, False, None)
    s = score_first_action(make_episode("sft", t, 0, True, first="bad_json"), t)
    assert (s.format_ok, s.name_match, s.args_match) == (False, True, False)


def test_first_action_numbers_compare_json_values_not_text(tasks):
    t = tasks[1]
    ep = make_episode("sft", t, 0, True)
    ep.messages[2]["tool_calls"][0]["function"]["arguments"] = '{"maxResults": 10.0, "calendarId": "primary"}'
    assert score_first_action(ep, t).args_match
    ep.messages[2]["tool_calls"][0]["function"]["arguments"] = '{"maxResults": true, "calendarId": "primary"}'
    assert not score_first_action(ep, t).args_match


def test_first_action_eval_per_arm(tasks):
    eps = [make_episode("base", t, 0, False, first="message") for t in tasks]
    eps += [make_episode("sft", t, 0, True, first="oracle" if i % 2 else "wrong_args") for i, t in enumerate(tasks)]
    summary = first_action_eval(eps, {t.id: t for t in tasks})
    assert summary["base"].format_ok.successes == 0
    assert summary["sft"].format_ok.successes == 6 and summary["sft"].name_match.successes == 6
    assert summary["sft"].args_match.successes == 3


def test_builtin_behaviours(tasks):
    t = tasks[3]  # drive
    created = {"ok": True, "result": {"id": "file-9xyz", "name": "budget"}}
    looping = make_episode("sft", t, 0, False, stop="max_steps",
                           extra_calls=[("drive_files_list", {"q": "name contains 'budget'"}, {"ok": True, "result": {}})])
    honest = make_episode("sft", t, 1, True, final_answer="I created file-9xyz as asked.",
                          extra_calls=[("drive_files_create", {"body": {"name": "budget"}}, created)])
    liar = make_episode("sft", t, 2, False, final_answer="I updated file-9xyz.",
                        extra_calls=[("drive_files_get", {"fileId": "file-9xyz"}, created)])
    silent = make_episode("base", t, 0, False, first="message")
    recovered = make_episode("base", t, 1, False, extra_calls=[
        ("drive_files_get", {"fileId": "nope"}, {"ok": False, "error": {"code": 404}}),
        ("drive_files_list", {}, {"ok": True, "result": {}})])
    rates = behaviour_rates([looping, honest, liar, silent, recovered], {t.id: t})
    sft, base = rates["sft"], rates["base"]
    assert (sft["repeated_identical_call"].true, sft["repeated_identical_call"].applicable) == (1, 3)
    assert (sft["touched_what_it_said"].true, sft["touched_what_it_said"].applicable) == (1, 2)
    assert sft["hit_max_steps"].true == 1 and sft["first_action_tool_call"].true == 3
    assert base["first_action_message"].true == 1 and base["gave_up_without_tool_call"].true == 1
    assert (base["recovered_after_tool_error"].true, base["recovered_after_tool_error"].applicable) == (1, 1)
    # the task offers drive_files_list and drive_files_update; create and get were not offered
    assert (sft["called_unoffered_tool"].true, sft["called_unoffered_tool"].applicable) == (2, 3)
    assert sft["oracle_tools_used"].applicable == 3
    assert sft["first_action_tool_call"].rate == 1.0


def test_plan_names_real_tools(tasks):
    t = tasks[3]  # offers drive_files_list and drive_files_update
    real = make_episode("sft", t, 0, True, first="message")
    real.messages[2]["content"] = "Plan: call drive_files_list, then drive_files_update."
    fake = make_episode("sft", t, 1, True, first="message")
    fake.messages[2]["content"] = "Plan: call drive_files_search to find it."
    quiet = make_episode("sft", t, 2, True)
    r = behaviour_rates([real, fake, quiet], names=["plan_names_real_tools"])["sft"]["plan_names_real_tools"]
    assert (r.true, r.applicable) == (1, 2)


def test_behaviour_plugin_registration(tasks):
    @behaviour("test_long_answer", "final answer over 5 characters")
    def long_answer(ep, task):
        return None if ep.final_answer is None else len(ep.final_answer) > 5

    try:
        eps = [make_episode("sft", tasks[0], 0, True, final_answer="Done."),
               make_episode("sft", tasks[0], 1, True, final_answer="All finished."),
               make_episode("sft", tasks[0], 2, True, final_answer=None)]
        r = behaviour_rates(eps, names=["test_long_answer"])["sft"]["test_long_answer"]
        assert (r.true, r.applicable) == (1, 2)
        with pytest.raises(ValueError, match="already registered"):
            behaviour("test_long_answer", "again")(lambda ep, task: True)
    finally:
        BEHAVIOURS.pop("test_long_answer", None)


def test_write_tools_by_api_verb():
    assert is_write_tool("gmail_messages_send") and is_write_tool("slack_chat_postMessage")
    assert is_write_tool("docs_documents_batchUpdate") and is_write_tool("admin_tokens_delete")
    assert not is_write_tool("drive_files_list") and not is_write_tool("gmail_settings_get")
