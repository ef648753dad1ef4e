"""TRL rows train unchanged: TRL 1.16 SFTTrainer on the converted JSONL, tokenised exactly as the rows render."""

from __future__ import annotations

import json
import math

import datasets
import pytest
import torch

from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft import TrlRow, convert_file, results_row, write_results_jsonl
from env0_posttrain.sft.tokens import render_ids
from env0_posttrain_tests.sft.test_support import make_episode, make_task, tiny_tokenizer


@pytest.mark.slow
def test_sft_trainer_trains_two_steps_on_trl_rows_with_unchanged_rendering(tmp_path):
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from trl import SFTConfig, SFTTrainer

    tok = tiny_tokenizer()
    episodes = [make_episode(i, steering=(i == 1)) for i in range(4)]
    results = tmp_path / "results.jsonl"
    write_results_jsonl([results_row(e, make_task(i)) for i, e in enumerate(episodes)], results)
    out = tmp_path / "trl.jsonl"
    report = convert_file(results, out, SFTDataPolicy(first_turn_weight=2), fmt="trl",
                          tokenizer=tok, max_seq_length=4096)
    assert report.n_output_rows == 8

    # The plain loader, as a user would call it; no features given.
    dataset = datasets.load_dataset("json", data_files=str(out), split="train")
    stored = [TrlRow.from_stored(r) for r in dataset]
    expected_ids = [render_ids(r.messages, r.tools, tok) for r in stored]
    written = [TrlRow.from_stored(json.loads(line)) for line in out.read_text().splitlines()]
    assert [r.messages for r in stored] == [r.messages for r in written]
    assert [r.tools for r in stored] == [r.tools for r in written]

    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=32, max_position_embeddings=4096,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    model = Qwen3ForCausalLM(config)
    args = SFTConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=2,
                     learning_rate=1e-3, use_cpu=True, bf16=False,
                     assistant_only_loss=True, max_length=4096, report_to=[], save_strategy="no",
                     logging_steps=1, dataset_num_proc=None, seed=0)
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tok)

    tokenized = trainer.train_dataset
    assert [list(x) for x in tokenized["input_ids"]] == expected_ids
    for labels, ids in zip(tokenized["labels"], tokenized["input_ids"]):  # assistant-only loss: some, not all
        trained = [t for t in labels if t != -100]
        assert len(labels) == len(ids) and 0 < len(trained) < len(ids)

    result = trainer.train()
    assert trainer.state.global_step == 2
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(x) and x > 0 for x in losses)
    assert math.isfinite(result.training_loss)
