"""The one rule for a reward (tasks/reward.py): a finite number in [-1, 1] or a RewardError naming the value, never a
clamp; an unscored episode is worth the task's minimum to an optimiser and never passes."""

from __future__ import annotations

import math

import pytest
from pydantic import BaseModel, ValidationError

from env0_posttrain.tasks.model import VerifierResult
from env0_posttrain.tasks.reward import (REWARD_MIN, Reward, RewardError, checked_reward, is_unscored, optimiser_reward,
                                         task_min_reward)
from env0_posttrain_tests.support.evaluate import make_episode, make_task

BAD = {
    "nan": (math.nan, "nan is not a finite number"),
    "inf": (math.inf, "inf is not a finite number"),
    "-inf": (-math.inf, "-inf is not a finite number"),
    "the string inf": ("inf", "'inf' is not a number (str)"),
    "the string 1": ("1", "'1' is not a number (str)"),
    "true": (True, "True is not a number (bool)"),
    "false": (False, "False is not a number (bool)"),
    "2.0": (2.0, "2.0 is outside [-1, 1]"),
    "-1.5": (-1.5, "-1.5 is outside [-1, 1]"),
    "huge float": (1e308, "1e+308 is outside [-1, 1]"),
    "huge int": (10 ** 400, "is not a finite number"),
    "a word": ("passed", "'passed' is not a number (str)"),
    "none": (None, "None is not a number (NoneType)"),
    "a list": ([1.0], "[1.0] is not a number (list)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_reward_is_refused_with_the_value_named_never_clamped(case):
    value, message = BAD[case]
    with pytest.raises(RewardError, match="^reward.json's reward: .*") as err:
        checked_reward(value, "reward.json's reward")
    assert message in str(err.value)
    with pytest.raises(ValidationError, match="reward"):
        VerifierResult(reward=value)


@pytest.mark.parametrize("value", [-1, -1.0, 0, 0.25, 1, 1.0])
def test_a_finite_number_in_range_is_the_reward(value):
    assert checked_reward(value) == float(value) and type(checked_reward(value)) is float
    assert VerifierResult(reward=value).reward == float(value)


def test_the_pydantic_type_refuses_what_lax_float_coercion_would_take():
    class Row(BaseModel):
        reward: Reward | None

    assert Row(reward=None).reward is None and Row(reward=0.5).reward == 0.5
    for value in ("1", True, "nan", math.nan):
        with pytest.raises(ValidationError, match="reward"):
            Row(reward=value)


def test_an_unscored_episode_is_worth_the_minimum_and_never_passes():
    task = make_task(0)
    gated = make_episode("rl", task, 0, False).model_copy(update={"verifier": VerifierResult(reward=-1.0)})
    crashed = make_episode("rl", task, 1, False, stop="verifier_error", scored=False)
    infra = make_episode("rl", task, 2, False, stop="infra_error", scored=False)
    # a verdict beside an unscoring stop (a bug elsewhere) still counts as no verdict
    odd = make_episode("rl", task, 3, True, stop="environment_error")
    assert task_min_reward(task) == REWARD_MIN == -1.0
    for ep in (crashed, infra, odd):
        assert is_unscored(ep) and optimiser_reward(ep, task) == -1.0 and ep.reward == -1.0 and not ep.passed
        assert optimiser_reward(ep.model_dump(mode="json"), task) == -1.0  # a stored row, the same
    assert optimiser_reward(gated, task) == -1.0 and not is_unscored(gated)
    assert optimiser_reward(crashed, task) <= min(optimiser_reward(gated, task), 0.0)  # never beats being caught
    ok = make_episode("rl", task, 4, True)
    assert optimiser_reward(ok, task) == 1.0 and optimiser_reward(ok.model_dump(mode="json")) == 1.0 and ok.passed


def test_a_results_row_without_a_reward_is_unscored_and_a_corrupt_stored_reward_is_refused():
    assert is_unscored({"reward": None, "stop_condition": "agent_completed"})
    assert is_unscored({"reward": 1.0, "stop_condition": "verifier_error"})
    assert optimiser_reward({"reward": 0.5, "stop_condition": "max_steps"}) == 0.5
    with pytest.raises(RewardError, match="stored reward: nan"):
        optimiser_reward({"verifier": {"reward": math.nan}, "stop_condition": "agent_completed"})
