"""Episode -> results.jsonl rows: the benchflow/verifiers fields, readiness, atomic writes."""

from __future__ import annotations

import json

import pytest

from env0_posttrain.sft import ResultsRow, results_row, validate_file, write_results_jsonl
from env0_posttrain_tests.sft.test_support import TOOLS, make_episode, make_task

REQUIRED = {"example_id", "prompt", "completion", "info", "reward", "score", "error", "timing", "is_completed",
            "is_truncated", "stop_condition", "metrics", "tool_defs", "token_usage", "total_tool_calls",
            "trajectory"}


def test_results_row_has_every_benchflow_field_and_splits_prompt_at_first_user():
    row = results_row(make_episode(3, reward=0.5, steering=True), make_task(3))
    data = row.model_dump(mode="json")
    assert REQUIRED <= set(data)
    assert [m["role"] for m in row.prompt] == ["system", "user"]
    assert [m["role"] for m in row.completion] == ["assistant", "tool", "assistant", "tool", "assistant"]
    assert row.example_id == "mail-reply-003"
    info = data["info"]
    assert {k: info[k] for k in ("task_id", "task_name", "model", "agent", "training_ready")} == {
        "task_id": "mail-reply-003", "task_name": "mail.reply_to_sender", "model": "env0-oracle/oracle",
        "agent": "env0-agent", "training_ready": True}
    assert info["training_ready_reason"] == "ok" and info["steering_prompt"]
    assert row.reward == 0.5 and row.score == 0.5  # mean of the checks {sent: 0, recipient: 1}
    assert row.total_tool_calls == 2 and row.metrics["n_tool_calls"] == 2.0
    assert row.metrics["check/recipient"] == 1.0 and row.metrics["n_assistant_turns"] == 3.0
    assert row.is_completed and not row.is_truncated and row.stop_condition == "agent_completed"
    assert len(row.trajectory) == 3 and row.trajectory[1].request_len == 4
    assert row.timing.model_latency_s == pytest.approx(1.5)
    assert row.token_usage.prompt_tokens == 303 and row.tool_defs == TOOLS


def test_no_oracle_or_state_of_the_task_reaches_the_row():
    text = results_row(make_episode(1), make_task(1)).model_dump_json()
    for key in ("oracle", "recipe", "items", "noop_reward"):
        assert f'"{key}"' not in text


@pytest.mark.parametrize(
    ("stop", "ready", "reason"),
    [("agent_completed", True, "ok"), ("max_steps", True, "ok (truncated at max_steps)"),
     ("infra_error", False, "stop_condition=infra_error"), ("agent_error", False, "stop_condition=agent_error")],
)
def test_training_ready_follows_the_stop_condition(stop, ready, reason):
    row = results_row(make_episode(0, stop=stop), make_task(0))
    assert row.info.training_ready is ready
    assert row.info.training_ready_reason.startswith(reason)
    assert row.is_truncated is (stop == "max_steps")


def test_a_structurally_broken_episode_is_not_training_ready_and_says_why():
    ep = make_episode(0)
    ep.messages.insert(3, {"role": "system", "content": "second system prompt"})
    row = results_row(ep, make_task(0))
    assert not row.info.training_ready
    assert "messages[3].role: a system message may only come first" in row.info.training_ready_reason


def test_results_row_refuses_an_episode_of_another_task():
    with pytest.raises(ValueError, match="is for task 'mail-reply-000', not 'mail-reply-001'"):
        results_row(make_episode(0), make_task(1))


def test_write_results_jsonl_roundtrips_and_validates(tmp_path):
    rows = [results_row(make_episode(i, trial=i % 2), make_task(i)) for i in range(4)]
    path = tmp_path / "run" / "results.jsonl"
    assert write_results_jsonl(rows, path) == 4
    lines = path.read_text().splitlines()
    assert len(lines) == 4
    back = [ResultsRow.model_validate_json(line) for line in lines]
    assert back == rows
    report = validate_file(path)
    assert report.ok and report.n_rows == 4 and report.kinds["results"] == 4


def test_a_failed_write_leaves_the_existing_file_untouched(tmp_path):
    path = tmp_path / "results.jsonl"
    write_results_jsonl([results_row(make_episode(0), make_task(0))], path)
    before = path.read_bytes()
    bad = results_row(make_episode(1), make_task(1)).model_dump(mode="json")
    bad["reward"] = 7.0
    with pytest.raises(ValueError, match=r"row 2: reward: .*7.0 is outside \[-1, 1\]"):
        write_results_jsonl([results_row(make_episode(2), make_task(2)), bad], path)
    nan = results_row(make_episode(3), make_task(3))
    nan.metrics["n_tool_calls"] = float("nan")
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        write_results_jsonl([nan], path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"]  # no temporary file left behind
    assert json.loads(before)["example_id"] == "mail-reply-000"
