"""The SFT eval split holds out whole episodes; the adapter's checkpoint is chosen by eval loss or first call."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from env0_posttrain.spec.runspec import LoraSpec
from env0_posttrain.train import train_lora
from env0_posttrain.train.checkpoint_choice import pick_best
from env0_posttrain.train.lora_sft import episode_of, split_eval
from env0_posttrain_tests.train.test_lora import LORA, base, data  # noqa: F401 - shared module fixtures


def _rows(n_episodes: int, copies: int) -> list[dict]:
    """Upweighted rows as sft_rows stores them: `source` a JSON string, repeats sharing the episode key."""
    return [{"messages": [], "tools": "[]", "source": json.dumps({"episode_key": f"run/teacher/t{e}/0", "repeat": k})}
            for e in range(n_episodes) for k in range(copies)]


@pytest.mark.parametrize("seed", range(5))
def test_every_copy_of_an_episode_lands_on_one_side_of_the_split(seed):
    rows = _rows(20, 3)
    train, held = split_eval(rows, None, LoraSpec(eval_fraction=0.2, seed=seed))
    train_keys = {episode_of(r, 0) for r in train}
    held_keys = {episode_of(r, 0) for r in held}
    assert held_keys and not train_keys & held_keys
    assert len(held) == 12 and len(train) + len(held) == 60  # 4 whole episodes of 3 copies
    assert split_eval(rows, None, LoraSpec(eval_fraction=0.2, seed=seed)) == (train, held)


def test_the_held_out_episodes_are_datasets_seeded_split_of_the_episode_keys():
    from datasets import Dataset

    rows = _rows(10, 2)
    keys = sorted({episode_of(r, 0) for r in rows})
    held_by_seed = []
    for seed in range(4):
        _, held = split_eval(rows, None, LoraSpec(eval_fraction=0.3, seed=seed))
        expected = Dataset.from_dict({"episode": keys}).train_test_split(test_size=3, seed=seed)["test"]["episode"]
        assert {episode_of(r, 0) for r in held} == set(expected)
        held_by_seed.append(frozenset(episode_of(r, 0) for r in held))
    assert len(set(held_by_seed)) > 1, "the seed chooses which episodes are held out"
    assert split_eval(rows[:2], None, LoraSpec(eval_fraction=0.9)) == (rows[:2], []), "one episode stays in training"


def test_rows_without_a_source_are_split_one_by_one():
    rows = [{"messages": [i]} for i in range(10)]
    train, held = split_eval(rows, None, LoraSpec(eval_fraction=0.3))
    assert len(held) == 3 and len(train) == 7


def test_the_later_checkpoint_wins_a_tie_of_first_call_matches():
    assert pick_best({3: 2, 6: 2, 9: 1}) == 6 and pick_best({3: 4, 6: 2}) == 3


def test_first_call_choice_needs_held_back_rows():
    with pytest.raises(ValidationError, match="eval_fraction > 0"):
        LoraSpec(checkpoint_choice="first_call", eval_fraction=0.0)


@pytest.mark.slow  # ~70 s on two shared cores: trains, then generates on every checkpoint
def test_first_call_choice_scores_every_checkpoint_and_ships_the_best(base, data, tmp_path):  # noqa: F811
    lora = LORA.model_copy(update={"checkpoint_choice": "first_call", "eval_fraction": 0.25})
    result = train_lora(data.train, None, lora, base, tmp_path)
    choice = result.checkpoint
    assert choice.rule == "first_call" and set(choice.scores) == {3, 6} and choice.n_prompts > 0
    assert choice.step == pick_best(choice.scores)
    shipped = (result.adapter_dir / "adapter_model.safetensors").read_bytes()
    assert shipped == (tmp_path / "checkpoints" / f"checkpoint-{choice.step}" / "adapter_model.safetensors").read_bytes()
    summary = json.loads((result.adapter_dir / "training_summary.json").read_text())
    assert summary["checkpoint"]["rule"] == "first_call" and summary["checkpoint"]["step"] == choice.step


@pytest.mark.slow
def test_eval_loss_choice_is_recorded_with_the_adapter(base, data, tmp_path):  # noqa: F811
    result = train_lora(data.train, data.eval, LORA, base, tmp_path)
    assert result.checkpoint.rule == "eval_loss" and result.checkpoint.step == result.best_step
    summary = json.loads((result.adapter_dir / "training_summary.json").read_text())
    assert summary["checkpoint"] == {"rule": "eval_loss", "step": result.best_step, "scores": {}, "n_prompts": 0}
