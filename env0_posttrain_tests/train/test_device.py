"""One device per process, and kernel patches that stay with their model.

On a GPU the trainer applies Liger, which rebinds names in transformers' modeling module (`Qwen3RMSNorm`,
`apply_rotary_pos_emb`): every model built later in that process ran Liger's Triton kernels too, and the sanity
probe, loading the base on CPU, failed with Triton's 'cpu tensor?' error. Here a stand-in for Liger does what
Liger does to the class, with a norm that refuses CPU tensors as Triton does; no GPU is needed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types

import pytest

from env0_posttrain.spec.runspec import LoraSpec, RunSpec
from env0_posttrain.train.gpu.patch_scope import kernel_patches_undone
from env0_posttrain.train.synthetic_rows import make_synthetic_set
from env0_posttrain.train.tiny_student.build import TinyStudentConfig, ensure_tiny_student

STUDENT = TinyStudentConfig(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                            vocab_size=320, pretrain_steps=2, pretrain_batch_size=2, pretrain_seq_len=32)
LORA = LoraSpec(r=4, alpha=8, dropout=0.0, learning_rate=1e-2, max_seq_length=512, per_device_batch_size=2,
                grad_accumulation=1, max_steps=2, save_steps=10, logging_steps=1, warmup_ratio=0.0, eval_fraction=0.0,
                report_to=[])
TRITON_CPU = "Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)"


@pytest.fixture(scope="module")
def data():
    return make_synthetic_set(6, 2, seed=4)


@pytest.fixture(scope="module")
def base(tmp_path_factory, data):
    return ensure_tiny_student(tmp_path_factory.mktemp("students"), data.corpus, data.entities, STUDENT)


def _fake_liger(monkeypatch, applied: list):
    """A stand-in `liger_kernel` whose `_apply_liger_kernel_to_instance` rebinds the modeling module's RMSNorm class,
    as `apply_liger_kernel_to_qwen3(model=...)` does, with a norm that raises on CPU tensors as Triton does."""
    from transformers.models.qwen3 import modeling_qwen3

    original = modeling_qwen3.Qwen3RMSNorm
    forward = modeling_qwen3.Qwen3ForCausalLM.forward

    class TritonOnlyRMSNorm(original):
        def forward(self, hidden_states):
            if hidden_states.device.type == "cpu":
                raise ValueError(TRITON_CPU)
            return super().forward(hidden_states)

    def apply(model, **kwargs):
        applied.append(type(model).__name__)
        modeling_qwen3.Qwen3RMSNorm = TritonOnlyRMSNorm  # the class-level rebinding that leaked
        modeling_qwen3.Qwen3ForCausalLM.forward = lambda self, *a, **k: forward(self, *a, **k)  # and a class's forward

    package = types.ModuleType("liger_kernel")
    sub = types.ModuleType("liger_kernel.transformers")
    sub._apply_liger_kernel_to_instance = apply
    package.transformers = sub
    monkeypatch.setitem(sys.modules, "liger_kernel", package)
    monkeypatch.setitem(sys.modules, "liger_kernel.transformers", sub)
    import transformers.integrations.liger as hf_liger

    monkeypatch.setattr(hf_liger, "is_liger_kernel_available", lambda: True)
    return modeling_qwen3, original, forward


def test_the_probe_after_a_liger_training_runs_plain_torch(monkeypatch, tmp_path, base, data):
    """The issue's crash, on CPU: train with 'Liger' on, then probe in the same process."""
    from env0_posttrain.train import lora_sft, sanity_probe

    applied: list = []
    modeling_qwen3, original, forward = _fake_liger(monkeypatch, applied)
    real_settings = lora_sft.resolve_device_settings
    monkeypatch.setattr(lora_sft, "resolve_device_settings",
                        lambda *a, **k: real_settings(*a, **k) | {"use_liger_kernel": True})
    try:
        result = lora_sft.train_lora(data.train[:4], [], LORA, base, tmp_path / "run")
        assert applied == ["Qwen3ForCausalLM"]  # the trainer did apply the stand-in
        assert modeling_qwen3.Qwen3RMSNorm is original and modeling_qwen3.Qwen3ForCausalLM.forward is forward
        probe = sanity_probe(base, result.adapter_dir, data.train[:4], n=2, max_new_tokens=4, device=result.device)
        assert probe.n_prompts == 2
    finally:  # never leave the stand-in behind for other tests, whatever the code under test did
        modeling_qwen3.Qwen3RMSNorm, modeling_qwen3.Qwen3ForCausalLM.forward = original, forward


def test_patches_are_undone_but_the_patched_instance_keeps_its_own():
    import torch
    import torch.nn.functional as F
    from transformers.models.qwen3 import modeling_qwen3

    norm, forward, ce = modeling_qwen3.Qwen3RMSNorm, modeling_qwen3.Qwen3ForCausalLM.forward, F.cross_entropy
    instance = torch.nn.Linear(2, 2)
    with kernel_patches_undone() as undone:
        modeling_qwen3.Qwen3RMSNorm = torch.nn.Identity
        modeling_qwen3.Qwen3ForCausalLM.forward = lambda self, *a, **k: None
        F.cross_entropy = lambda *a, **k: None
        instance.forward = lambda x: x  # what Liger does to the model it was given
    assert modeling_qwen3.Qwen3RMSNorm is norm and modeling_qwen3.Qwen3ForCausalLM.forward is forward
    assert F.cross_entropy is ce
    assert instance.forward(7) == 7
    assert {"transformers.models.qwen3.modeling_qwen3.Qwen3RMSNorm", "torch.nn.functional.cross_entropy",
            "transformers.models.qwen3.modeling_qwen3.Qwen3ForCausalLM.forward"} <= set(undone)


def test_a_patch_is_undone_when_training_fails():
    from transformers.models.qwen3 import modeling_qwen3

    norm = modeling_qwen3.Qwen3RMSNorm
    with pytest.raises(RuntimeError), kernel_patches_undone():
        modeling_qwen3.Qwen3RMSNorm = object
        raise RuntimeError("step 1 failed")
    assert modeling_qwen3.Qwen3RMSNorm is norm


# student.device ----------------------------------------------------------------------------------------
def test_a_cpu_is_named_with_the_kernels_torch_dispatches_to():
    """The vector ISA sets a CPU run's last digits; the label follows what torch really uses (ATEN_CPU_CAPABILITY)."""
    code = "from env0_posttrain.util.devices import device_label; print(device_label('cpu'))"
    machine = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    labels = {cap: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env=machine | ({"ATEN_CPU_CAPABILITY": cap} if cap else {})).stdout.strip()
              for cap in ("default", "")}
    assert labels["default"] == "cpu (DEFAULT kernels)"
    assert re.fullmatch(r"cpu \((DEFAULT|AVX2|AVX512|AVX512_VNNI|AVX512_BF16|AMX|ZVECTOR|VSX|SVE\d*) kernels\)",
                        labels[""]), labels


def test_auto_is_cuda_exactly_when_a_gpu_is_there(monkeypatch):
    import torch

    from env0_posttrain.util.devices import DeviceError, model_dtype, resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == resolve_device(None) == "cpu" and model_dtype("cpu") == torch.float32
    with pytest.raises(DeviceError, match="student.device is 'cuda'"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert model_dtype("cuda") == torch.bfloat16
    with pytest.raises(ValueError):
        RunSpec(run_id="r", student={"device": "tpu"})


def test_a_cpu_student_on_a_gpu_machine_trains_on_cpu(monkeypatch, tmp_path, base, data):
    """`student.device: cpu` wins over the GPU torch sees: no CUDA kernel check, fp32, the device recorded."""
    import torch

    from env0_posttrain.train import lora_sft

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    settings = lora_sft.resolve_device_settings(LORA, device="cpu")
    assert settings["use_cpu"] and not settings["bf16"] and not settings["use_liger_kernel"]
    asked: list = []
    real_probe = lora_sft.probe_kernels

    def probe(cuda=None):  # the GPU stays visible up to the kernel check; the trainer itself sees none
        asked.append(cuda)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        return real_probe(cuda)

    monkeypatch.setattr(lora_sft, "probe_kernels", probe)
    result = lora_sft.train_lora(data.train[:4], [], LORA.model_copy(update={"max_steps": 1}), base, tmp_path,
                                 device="cpu")
    assert asked == [False] and result.device == "cpu" and result.kernels["cuda"] is False


def test_every_local_arm_is_registered_on_the_students_device(monkeypatch, tmp_path):
    import torch

    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages import arms

    seen: list = []
    monkeypatch.setattr(arms, "register_local_model",
                        lambda alias, base, adapter_path=None, **kw: seen.append((alias, kw)) or f"env0-local/{alias}")
    monkeypatch.setattr(arms, "base_student", lambda *a: tmp_path)

    class Store:
        def latest_training(self, run_id):
            return {"revision": "abc", "adapter_path": str(tmp_path)}

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for device in ("auto", "cpu"):
        spec = RunSpec(run_id="r", student={"device": device}, rl={})
        for arm in ("base", "sft", "rl"):
            arms.arm_endpoint(spec, arm, Store(), "r", Paths.from_env(tmp_path))
    assert [kw for _, kw in seen] == [{"device": "cuda", "max_batch_size": 64, "repetition_window": None}] * 3 + [
        {"device": "cpu", "max_batch_size": 16, "repetition_window": None}] * 3


def test_the_reports_lineage_names_where_the_student_ran():
    from env0_posttrain.stages.comparison_report import student_devices

    summaries = {"r-base": {"device": "cuda (NVIDIA H100 80GB HBM3)"}, "r-sft": {"device": "cpu"}, "r-teacher": {}}

    class Store:
        def eval_summary(self, round_id):
            return summaries[round_id]

    ctx = types.SimpleNamespace(store=Store())
    rounds = {"base": "r-base", "sft": "r-sft", "teacher_eval": "r-teacher"}
    assert student_devices(ctx, rounds, {"result": {"device": "cuda"}}) == (
        "training: cuda; base: cuda (NVIDIA H100 80GB HBM3); sft: cpu")
    assert student_devices(ctx, {"teacher_eval": "r-teacher"}, None) is None


# report_to ---------------------------------------------------------------------------------------------
def _scalars(log_dir) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags = set()
    for run in {f.parent for f in log_dir.rglob("events.out.tfevents.*")}:
        acc = EventAccumulator(str(run))
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    return tags


def test_training_curves_go_to_tensorboard_beside_the_adapter(tmp_path, base, data):
    from env0_posttrain.train import lora_sft
    from env0_posttrain.train.tracking.trackers import event_files

    result = lora_sft.train_lora(data.train[:4], [], LORA.model_copy(update={"report_to": ["tensorboard"]}), base,
                                 tmp_path / "tb")
    assert result.tensorboard_dir == tmp_path / "tb" / "tensorboard" and event_files(result.tensorboard_dir)
    assert {"train/loss", "train/learning_rate"} <= _scalars(result.tensorboard_dir)
    assert not list((tmp_path / "tb" / "checkpoints").rglob("events.out.tfevents.*"))  # not transformers' default
    quiet = lora_sft.train_lora(data.train[:4], [], LORA, base, tmp_path / "none")  # report_to: []
    assert quiet.tensorboard_dir is None and not list((tmp_path / "none").rglob("events.out.tfevents.*"))


def test_the_base_pretraining_reports_to_tensorboard_in_the_students_folder(tmp_path, data):
    from env0_posttrain.train.tracking.trackers import event_files

    built = ensure_tiny_student(tmp_path, data.corpus, data.entities, STUDENT, report_to=["tensorboard"])
    assert event_files(built / "tensorboard") and "train/loss" in _scalars(built / "tensorboard")
    again = ensure_tiny_student(tmp_path / "plain", data.corpus, data.entities, STUDENT)
    assert again.name == built.name and not event_files(again / "tensorboard")  # logging is not in the digest
