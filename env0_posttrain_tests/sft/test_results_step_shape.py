"""results.jsonl trajectory steps carry the verifiers/benchflow step shape.

benchflow's `export_trl_sft` makes one training row per step from the step's own `prompt`
(non-empty message list) and `completion` (exactly one assistant message); without them it
turned 0 of our usable rollouts into rows. The fixture is written by hand from that contract.
"""

from __future__ import annotations

import copy
import json

import pytest

from env0_posttrain.sft import ResultsRow, results_row
from env0_posttrain_tests.sft.test_support import make_episode, make_task
from env0_posttrain_tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "results_row_verifiers_shape.json"


def _fixture() -> dict:
    return json.loads(FIXTURE.read_text())


def _assert_step_shape(step: dict) -> None:
    assert isinstance(step["prompt"], list) and step["prompt"], "prompt: non-empty message list"
    assert step["prompt"][-1]["role"] != "assistant"
    assert isinstance(step["completion"], list) and len(step["completion"]) == 1
    assert step["completion"][0]["role"] == "assistant"
    assert {"request_len", "response", "prompt_token_ids", "completion_token_ids"} <= set(step), "our extra fields"


def test_the_hand_written_row_validates_and_round_trips_its_step_lists():
    row = ResultsRow.model_validate(_fixture())
    dumped = json.loads(row.model_dump_json())
    for step, written in zip(dumped["trajectory"], _fixture()["trajectory"], strict=True):
        _assert_step_shape(step)
        assert step["prompt"] == written["prompt"] and step["completion"] == written["completion"]


def test_rows_built_from_episodes_carry_the_same_step_shape():
    episode = make_episode(3)
    data = json.loads(results_row(episode, make_task(3)).model_dump_json())
    assert len(data["trajectory"]) == len(episode.exchanges) == 3
    for step, ex in zip(data["trajectory"], episode.exchanges, strict=True):
        _assert_step_shape(step)
        assert step["prompt"] == episode.messages[: ex.request_len]
        assert step["completion"] == [ex.response]
    assert set(data["trajectory"][0]) == set(_fixture()["trajectory"][0]) | {
        "finish_reason", "usage", "latency_s", "error", "error_kind", "attempts"}


def test_a_failed_exchange_is_a_step_with_an_empty_completion():
    episode = make_episode(0)
    episode.exchanges[-1].response = None
    step = results_row(episode, make_task(0)).trajectory[-1]
    assert step.completion == [] and step.prompt == episode.messages[: step.request_len]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("prompt", [{"role": "user", "content": "something else"}], "trajectory[1].prompt is not the row's messages[:4]"),
    ("completion", [{"role": "assistant", "content": "other"}], "trajectory[1].completion is not"),
])
def test_a_step_that_disagrees_with_the_conversation_is_refused(field, value, message):
    data = _fixture()
    data["trajectory"][1][field] = value
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ResultsRow.model_validate(data)


def test_rows_written_before_steps_had_message_lists_still_load_and_gain_them():
    old = copy.deepcopy(_fixture())
    for step in old["trajectory"]:
        del step["prompt"], step["completion"]
    assert ResultsRow.model_validate(old).model_dump(mode="json")["trajectory"] == \
        ResultsRow.model_validate(_fixture()).model_dump(mode="json")["trajectory"]
