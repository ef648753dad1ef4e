"""LoRA SFT through TRL + PEFT on the tiny student: metrics, checkpoints, best step, resume, probe, plots."""

from __future__ import annotations

import json

import pytest

from env0_posttrain.spec.runspec import LoraSpec
from env0_posttrain.train import (
    ProbeResult,
    plot_training_curves,
    sanity_probe,
    train_lora,
)
from env0_posttrain.train.lora_sft import build_sft_config, resolve_device_settings
from env0_posttrain.train.rows import RowError, rows_to_dataset
from env0_posttrain.train.synthetic_rows import make_synthetic_set
from env0_posttrain.train.tiny_student.build import TinyStudentConfig, ensure_tiny_student

STUDENT = TinyStudentConfig(hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, intermediate_size=128,
                            vocab_size=400, pretrain_steps=8, pretrain_batch_size=4, pretrain_seq_len=64)
LORA = LoraSpec(r=8, alpha=16, dropout=0.0, learning_rate=1e-2, max_seq_length=512, per_device_batch_size=4,
                grad_accumulation=1, max_steps=6, save_steps=3, logging_steps=2, warmup_ratio=0.0)


@pytest.fixture(scope="module")
def data():
    return make_synthetic_set(32, 8, seed=2)


@pytest.fixture(scope="module")
def base(tmp_path_factory, data):
    return ensure_tiny_student(tmp_path_factory.mktemp("students"), data.corpus, data.entities, STUDENT)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, base, data):
    out = tmp_path_factory.mktemp("run")
    logs: list[dict] = []
    result = train_lora(data.train, data.eval, LORA, base, out, on_log=logs.append)
    return out, result, logs


def test_training_logs_metrics_and_keeps_the_best_checkpoint(trained):
    out, result, logs = trained
    assert result.steps == LORA.max_steps and result.device == "cpu"
    assert (result.adapter_dir / "adapter_config.json").exists()
    cfg = json.loads((result.adapter_dir / "adapter_config.json").read_text())
    assert cfg["r"] == LORA.r and cfg["lora_alpha"] == LORA.alpha and set(cfg["target_modules"]) == set(LORA.target_modules)
    train_logs = [r for r in logs if "loss" in r]
    eval_logs = [r for r in logs if "eval_loss" in r]
    assert [r["step"] for r in train_logs] == [2, 4, 6]
    assert {"learning_rate", "grad_norm", "tokens_per_s"} <= set(train_logs[0])
    assert all(r["tokens_per_s"] > 0 for r in train_logs)
    assert [r["step"] for r in eval_logs] == [3, 6]
    assert result.best_step in (3, 6)
    assert result.best_eval_loss == min(r["eval_loss"] for r in eval_logs)
    assert result.final_train_loss < result.first_train_loss
    assert result.n_train_rows == 32 and result.n_eval_rows == 8
    assert result.trainable_params > 0 and result.train_tokens > 0
    assert sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*")) == ["checkpoint-3", "checkpoint-6"]


def test_rerun_resumes_from_the_last_checkpoint(trained, base, data):
    out, _, _ = trained
    more = LORA.model_copy(update={"max_steps": 8, "save_steps": 4})
    logs: list[dict] = []
    again = train_lora(data.train, data.eval, more, base, out, on_log=logs.append)
    assert again.resumed_from is not None and again.resumed_from.endswith("checkpoint-6")
    assert again.steps == 8
    assert min(r["step"] for r in logs) > 6  # the first six steps were not trained again


def test_sanity_probe_passes_a_trained_adapter_and_blocks_an_untrained_one(trained, base, data, tmp_path):
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from env0_posttrain.train.lora_sft import build_lora_config

    _, result, _ = trained
    good = sanity_probe(base, result.adapter_dir, data.train, n=4, max_new_tokens=24)
    assert isinstance(good, ProbeResult) and good.n_prompts == 4
    assert good.adapter_loss < good.base_loss
    assert good.passed == (good.n_outputs_differ > 0), good.reason
    # A freshly initialised LoRA (B = 0) is the base: same outputs, same loss -> blocked, with the reason.
    blank = get_peft_model(AutoModelForCausalLM.from_pretrained(base), build_lora_config(LORA))
    blank.save_pretrained(tmp_path / "blank")
    bad = sanity_probe(base, tmp_path / "blank", data.train, n=4, max_new_tokens=16)
    assert not bad.passed and bad.n_outputs_differ == 0
    assert "identical" in bad.reason and "not below" in bad.reason


def test_plots_are_written_for_the_metrics_present(trained, tmp_path):
    _, result, _ = trained
    paths = plot_training_curves(result.metrics, tmp_path)
    assert sorted(p.name for p in paths) == ["eval_loss.png", "training_loss.png"]  # no GPU panels on CPU
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    gpu = [{"step": 1, "loss": 2.0, "gpu_util_pct": 90.0, "gpu_mem_gb": 30.0}, {"step": 2, "loss": 1.0, "gpu_util_pct": 95.0, "gpu_mem_gb": 31.0}]
    assert len(plot_training_curves(gpu, tmp_path / "gpu")) == 3


def test_cpu_gets_fp32_and_no_checkpointing_whatever_the_spec_says(tmp_path):
    device = resolve_device_settings(LoraSpec(bf16=True, gradient_checkpointing=True, use_liger=True))
    assert device["use_cpu"] and not device["bf16"] and not device["gradient_checkpointing"]
    assert not device["use_liger_kernel"] and not device["padding_free"]
    cfg = build_sft_config(LoraSpec(), tmp_path, True, device)
    assert (cfg.learning_rate, cfg.gradient_accumulation_steps, cfg.max_length, cfg.max_steps) == (1e-4, 8, 8192, 300)
    assert cfg.assistant_only_loss and cfg.per_device_train_batch_size == 1 and cfg.metric_for_best_model == "eval_loss"


def test_rows_keep_their_keys_and_bad_rows_name_the_row_and_field(data):
    ds = rows_to_dataset(data.train[:6])
    for i in range(6):  # no null keys injected by schema merging
        args = ds[i]["messages"][2]["tool_calls"][0]["function"]["arguments"]
        assert args == data.train[i]["messages"][2]["tool_calls"][0]["function"]["arguments"]
        assert ds[i]["tools"] == data.train[i]["tools"]
    wire = json.loads(json.dumps(data.train[0]))
    call = wire["messages"][2]["tool_calls"][0]["function"]
    call["arguments"] = json.dumps(call["arguments"])  # the agent's wire shape: a JSON string
    assert isinstance(rows_to_dataset([wire])[0]["messages"][2]["tool_calls"][0]["function"]["arguments"], dict)
    call["arguments"] = "{not json"
    with pytest.raises(RowError, match=r"train_rows\[0\]\.messages\[2\]\.tool_calls\[0\]\.function\.arguments"):
        rows_to_dataset([wire], "train_rows")
    with pytest.raises(RowError, match=r"rows\[1\]\.messages"):
        rows_to_dataset([data.train[0], {"messages": []}])


def test_tito_rows_train_on_their_own_labels(base, tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(base)
    ids = tok("Noted: ana.ito@acme.test.", add_special_tokens=False)["input_ids"]
    rows = [{"input_ids": ids, "completion_mask": [0] * 3 + [1] * (len(ids) - 3)} for _ in range(4)]
    ds = rows_to_dataset(rows)
    assert ds[0]["labels"][:3] == [-100] * 3 and ds[0]["labels"][3:] == ids[3:]
    with pytest.raises(RowError, match=r"rows\[0\]\.labels"):
        rows_to_dataset([{"input_ids": ids, "labels": ids[:-1]}])
    result = train_lora(rows, [], LORA.model_copy(update={"max_steps": 2, "eval_fraction": 0.0}), base, tmp_path)
    assert result.steps == 2 and result.best_step is None and (result.adapter_dir / "adapter_config.json").exists()


def test_the_adapter_does_not_depend_on_the_processs_rng_history(base, data, tmp_path):
    """Same rows, base and spec give the same adapter, whatever ran before in the process."""
    import torch
    from safetensors.torch import load_file

    spec = LORA.model_copy(update={"max_steps": 2, "eval_fraction": 0.0, "save_steps": 2})
    weights = []
    for i in range(2):
        torch.manual_seed(100 + i)  # another history of the global generator
        result = train_lora(data.train, [], spec, base, tmp_path / str(i), resume=False)
        weights.append(load_file(str(result.adapter_dir / "adapter_model.safetensors")))
    assert weights[0].keys() == weights[1].keys() and weights[0]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_a_declared_student_tokenizer_is_the_one_training_uses(base, data, tmp_path, monkeypatch):
    """student.tokenizer / student.chat_template reach training: the tokenizer given renders the rows and is
    saved with the adapter; the base's own is not loaded."""
    import json

    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(str(base))
    tok.init_kwargs["env0_declared"] = "student-tokenizer"  # saved into tokenizer_config.json

    def no_base_tokenizer(*args, **kwargs):
        raise AssertionError("train_lora loaded the base's tokenizer although one was given")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", no_base_tokenizer)
    spec = LORA.model_copy(update={"max_steps": 1, "eval_fraction": 0.0, "save_steps": 1})
    result = train_lora(data.train[:4], [], spec, base, tmp_path / "declared", resume=False, tokenizer=tok)
    assert result.steps == 1 and result.train_tokens > 0
    saved = json.loads((result.adapter_dir / "tokenizer_config.json").read_text())
    assert saved.get("env0_declared") == "student-tokenizer"
