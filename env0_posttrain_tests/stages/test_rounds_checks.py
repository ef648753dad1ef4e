"""A round's unscored count and its `no_unscored_rows` check use the one definition of "no verdict"
(tasks/reward.py): an episode stopped by a verifier or harness failure is unscored even when a verifier result is
stored beside it, so the check cannot pass on a round whose verdicts did not come."""

from __future__ import annotations

from env0_posttrain.stages.rounds import rollout_metadata, unscored_check
from env0_posttrain_tests.support.evaluate import make_episode, make_task


def test_a_verifier_error_stop_is_unscored_even_with_a_stored_verifier_result():
    task = make_task(0)
    scored = make_episode("sft", task, 0, True)
    crashed = make_episode("sft", task, 1, True, stop="verifier_error")  # a verifier result stored beside the stop
    missing = make_episode("sft", task, 2, False, scored=False)
    assert crashed.verifier is not None
    check = unscored_check([scored, crashed, missing])
    assert check.passed is False
    assert check.metadata["unscored"] == [f"{task.id}#1: verifier_error", f"{task.id}#2: agent_completed"]
    assert rollout_metadata("r1", [scored, crashed, missing], {})["unscored"] == 2
    assert unscored_check([scored]).passed is True
    assert unscored_check([]).passed is None
