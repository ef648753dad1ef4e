"""Per-turn loss weights (TitoRow.weight) reach the training loss."""

from __future__ import annotations

import pytest
import torch

from env0_posttrain.train import train_lora
from env0_posttrain.train.rows import RowError, rows_to_dataset
from env0_posttrain.train.synthetic_rows import make_synthetic_set
from env0_posttrain.train.tiny_student.build import ensure_tiny_student
from env0_posttrain.train.weighted_loss import WeightedCollator, weighted_token_loss
from env0_posttrain_tests.train.test_lora import LORA, STUDENT


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    data = make_synthetic_set(8, 2, seed=2)
    return ensure_tiny_student(tmp_path_factory.mktemp("students"), data.corpus, data.entities, STUDENT)


def _rows(base, weight: float | None):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(base)
    texts = ["Noted: ana.ito@acme.test.", "Sent the report to ben.", "Done: the meeting is at 10.", "Shared it."]
    rows = []
    for t in texts:
        ids = tok(t, add_special_tokens=False)["input_ids"]
        row = {"input_ids": ids, "completion_mask": [0] * 2 + [1] * (len(ids) - 2)}
        rows.append(row if weight is None else {**row, "weight": weight})
    return rows


def test_weights_survive_row_normalisation_and_bad_weights_name_the_row(base):
    ds = rows_to_dataset(_rows(base, 3.0))
    assert ds.column_names == ["input_ids", "labels", "weight"] and ds[0]["weight"] == 3.0
    assert "weight" not in rows_to_dataset(_rows(base, 1.0)).column_names  # unweighted rows: TRL's own loss
    with pytest.raises(RowError, match=r"rows\[0\]\.weight"):
        rows_to_dataset([{**_rows(base, None)[0], "weight": 0}])


def test_weighted_loss_is_the_weighted_token_mean():
    torch.manual_seed(0)
    logits = torch.randn(2, 5, 7)
    labels = torch.tensor([[-100, 1, 2, 3, -100], [-100, -100, 4, 5, 6]])
    ones = torch.ones(2, 5)
    plain = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 7), labels[:, 1:].reshape(-1))
    assert torch.isclose(weighted_token_loss(logits, labels, ones), plain)
    weights = torch.tensor([[2.0] * 5, [1.0] * 5])  # row 0's three tokens count twice
    ce = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 7), labels[:, 1:].reshape(-1),
                                           ignore_index=-100, reduction="none").view(2, 4)
    expected = (2 * ce[0, :3].sum() + ce[1, 1:].sum()) / 6
    assert torch.isclose(weighted_token_loss(logits, labels, weights), expected)


def test_collator_spreads_each_rows_weight_over_its_tokens_padded_and_padding_free():
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    rows = [{"input_ids": [1, 2, 3], "labels": [-100, 2, 3], "weight": 4.0},
            {"input_ids": [5, 6], "labels": [-100, 6], "weight": 1.0}]
    padded = WeightedCollator(DataCollatorForLanguageModeling(pad_token_id=0))(rows)
    assert padded["loss_weights"].tolist() == [[4.0, 4.0, 4.0], [1.0, 1.0, 0.0]]
    flat = WeightedCollator(DataCollatorForLanguageModeling(pad_token_id=0, padding_free=True))(rows)
    assert flat["loss_weights"].tolist() == [[4.0, 4.0, 4.0, 1.0, 1.0]]
    per_token = [{**rows[0], "weight": [1.0, 1.0, 5.0]}, rows[1]]
    padded = WeightedCollator(DataCollatorForLanguageModeling(pad_token_id=0))(per_token)
    assert padded["loss_weights"].tolist() == [[1.0, 1.0, 5.0], [1.0, 1.0, 0.0]]
    flat = WeightedCollator(DataCollatorForLanguageModeling(pad_token_id=0, padding_free=True))(per_token)
    assert flat["loss_weights"].tolist() == [[1.0, 1.0, 5.0, 1.0, 1.0]]


def test_per_token_weights_are_kept_per_token_and_checked(base):
    rows = _rows(base, None)
    n = len(rows[0]["input_ids"])
    listed = [{**rows[0], "weight": [1.0] * (n - 1) + [6.0]}, rows[1]]
    ds = rows_to_dataset(listed)
    assert ds[0]["weight"] == [1.0] * (n - 1) + [6.0]
    assert ds[1]["weight"] == [1.0] * len(rows[1]["input_ids"])  # a scalar row beside them: one weight per token
    with pytest.raises(RowError, match=rf"rows\[0\]\.weight: a per-token weight list needs {n} positive numbers"):
        rows_to_dataset([{**rows[0], "weight": [1.0] * (n - 1)}])
    with pytest.raises(RowError, match=r"rows\[1\]\.weight: a per-token"):
        rows_to_dataset([rows[0], {**rows[1], "weight": [0.0] * len(rows[1]["input_ids"])}])


def test_a_rows_weight_scales_its_training_loss(base, tmp_path):
    """The first logged loss comes before any update: weight 3 on every row makes it exactly 3 times larger."""
    spec = LORA.model_copy(update={"max_steps": 1, "logging_steps": 1, "eval_fraction": 0.0})
    plain = train_lora(_rows(base, None), [], spec, base, tmp_path / "plain")
    tripled = train_lora(_rows(base, 3.0), [], spec, base, tmp_path / "tripled")
    assert plain.first_train_loss and tripled.first_train_loss
    assert tripled.first_train_loss == pytest.approx(3 * plain.first_train_loss, rel=1e-3)
    per_token = [{**r, "weight": [3.0] * len(r["input_ids"])} for r in _rows(base, None)]
    listed = train_lora(per_token, [], spec, base, tmp_path / "listed")
    assert listed.first_train_loss == pytest.approx(tripled.first_train_loss, rel=1e-6)


def test_the_sanity_probe_reads_token_rows_from_their_prompt_ids(base, tmp_path):
    """TITO rows have no messages: the probe prompts with the rows' unmasked ids and scores their labels."""
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from env0_posttrain.train import sanity_probe
    from env0_posttrain.train.lora_sft import build_lora_config

    rows = _rows(base, 2.0)
    trained = train_lora(rows, [], LORA.model_copy(update={"max_steps": 6, "eval_fraction": 0.0}), base, tmp_path / "a")
    good = sanity_probe(base, trained.adapter_dir, rows, n=4, max_new_tokens=12)
    assert good.n_prompts == 4 and good.adapter_loss < good.base_loss
    assert good.passed == (good.n_outputs_differ > 0), good.reason
    blank = get_peft_model(AutoModelForCausalLM.from_pretrained(base), build_lora_config(LORA))
    blank.save_pretrained(tmp_path / "blank")
    bad = sanity_probe(base, tmp_path / "blank", rows, n=4, max_new_tokens=12)
    assert not bad.passed and bad.n_outputs_differ == 0 and "identical" in bad.reason
