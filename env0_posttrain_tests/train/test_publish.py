"""Hub publishing is opt-in and offline-safe: the card renders, no token means no push, names are versioned."""

from __future__ import annotations

import json
import re

import pytest

from env0_posttrain.train import (
    CardInfo,
    PublishError,
    adapter_revision,
    adapter_serving_name,
    push_adapter,
    render_model_card,
)

INFO = CardInfo(
    base_model="Qwen/Qwen3.5-9B",
    run_id="demo-1",
    dataset_provenance="Teacher env0-oracle/oracle (skill 0.85) on task set starter-v1 (300 train tasks); rows with reward >= 1.",
    n_train_rows=287,
    hyperparameters={"r": 32, "alpha": 64, "learning_rate": 1e-4, "max_seq_length": 8192},
    eval_summary={"base pass rate": 0.05, "adapter pass rate": 0.41, "McNemar p": 0.0004},
    train_summary={"steps": 300, "best_step": 200},
)


@pytest.fixture
def adapter_dir(tmp_path):
    d = tmp_path / "adapter"
    d.mkdir()
    (d / "adapter_config.json").write_text(json.dumps({"r": 32}))
    (d / "adapter_model.safetensors").write_bytes(b"weights-v1")
    return d


def test_model_card_names_base_data_hyperparameters_and_eval():
    from huggingface_hub import ModelCard

    card = render_model_card(INFO, "acme/env0-sft-demo")
    front, body = card.split("---\n")[1], re.sub(r" +", " ", card.split("---\n", 2)[2])  # table cells are padded
    assert "base_model: Qwen/Qwen3.5-9B" in front and "library_name: peft" in front
    data = ModelCard(card).data
    assert data.base_model == "Qwen/Qwen3.5-9B" and data.library_name == "peft" and "lora" in data.tags
    assert "# acme/env0-sft-demo" in body and "run `demo-1`" in body
    assert "starter-v1" in body and "Training rows: 287." in body
    assert "| r | 32 |" in body and "| learning_rate | 0.0001 |" in body
    assert "| adapter pass rate | 0.41 |" in body and "| best_step | 200 |" in body
    assert 'PeftModel.from_pretrained(base, "acme/env0-sft-demo")' in body


def test_push_refuses_without_a_token_and_touches_nothing(adapter_dir, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(PublishError, match="HF_TOKEN is not set"):
        push_adapter(adapter_dir, "acme/env0-sft-demo", INFO)
    assert not (adapter_dir / "README.md").exists()


def test_push_refuses_a_directory_that_is_not_an_adapter(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token_not_used")
    with pytest.raises(PublishError, match="not a PEFT adapter"):
        push_adapter(tmp_path, "acme/x", INFO)


def test_serving_name_is_versioned_by_adapter_content(adapter_dir):
    rev1 = adapter_revision(adapter_dir)
    assert adapter_serving_name("env0-sft", rev1) == f"env0-sft-{rev1}"
    (adapter_dir / "adapter_model.safetensors").write_bytes(b"weights-v2")
    rev2 = adapter_revision(adapter_dir)
    assert rev2 != rev1 and adapter_serving_name("env0-sft", rev2) != adapter_serving_name("env0-sft", rev1)
    (adapter_dir / "README.md").write_text("a card does not change the weights")
    assert adapter_revision(adapter_dir) == rev2
    assert adapter_serving_name("my org/sft", "abc") == "my-org-sft-abc"
    with pytest.raises(ValueError):
        adapter_serving_name("env0-sft", "")
