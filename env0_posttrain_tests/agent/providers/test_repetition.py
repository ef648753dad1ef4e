"""A local student's greedy reply that repeats one block is cut there (`eval.repetition_window`)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from env0_posttrain.agent.providers.greedy import repeats_itself
from env0_posttrain.agent.providers.local_model import GenRequest, local_model, register_local_model
from env0_posttrain.spec.runspec import EvalSpec
from env0_posttrain_tests.support.agent import build_tiny_student


def test_repeats_itself_needs_a_whole_window_of_one_short_block():
    loop = [5, 6, 7] * 20  # period 3
    assert repeats_itself(loop, 32) and repeats_itself([1, 2] + loop, 32)
    assert repeats_itself(loop[:-1], 32)  # the last copy may be cut
    assert not repeats_itself(loop[:31], 32)  # shorter than the window
    assert not repeats_itself(list(range(40)), 32)  # counting: no period
    assert not repeats_itself(list(range(9)) * 5, 32)  # period 9 > 32 // 4: a block that long may be a real list
    assert repeats_itself(list(range(8)) * 5, 32)
    assert not repeats_itself(loop[:-5] + [99] + loop[-4:], 32)  # one odd token inside the window


@pytest.fixture(scope="module")
def looping_student(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-looping")
    build_tiny_student(path)  # random weights: greedy replies fall into a loop at once
    return register_local_model("rep-off", path), register_local_model("rep-on", path, repetition_window=32)


def test_a_looping_reply_is_cut_at_the_window_and_is_the_uncut_replys_prefix(looping_student):
    requests = [GenRequest(messages=[{"role": "user", "content": f"Create the notes note {i}-a"}], tools=None,
                           temperature=0.0, top_p=1.0, max_tokens=160) for i in range(4)]
    uncut = local_model("rep-off").generate_batch(requests)
    cut = local_model("rep-on").generate_batch(requests)
    assert [r.finish_reason for r in uncut] == ["length"] * 4 and all(len(r.completion_ids) == 160 for r in uncut)
    for full, short in zip(uncut, cut):
        n = len(short.completion_ids)
        assert short.finish_reason == "repetition" and 32 <= n < 160 and n % 8 == 0
        assert short.completion_ids == full.completion_ids[:n] and repeats_itself(short.completion_ids, 32)
        assert not repeats_itself(short.completion_ids[:-8], 32) or n == 32  # cut at the first check that saw it


def test_the_spec_bounds_the_window():
    assert EvalSpec().repetition_window is None
    assert EvalSpec(repetition_window=128).repetition_window == 128
    with pytest.raises(ValidationError, match="repetition_window"):
        EvalSpec(repetition_window=4)
