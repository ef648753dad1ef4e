"""The GPU path without a GPU: the kernel check, the memory plan on fake memory figures, partial
checkpointing on a tiny Qwen3.5 (same gradients), and when batches go padding-free."""

from __future__ import annotations

import importlib.machinery
import json
import sys
import types

import pytest

from env0_posttrain.spec.runspec import LoraSpec, RunSpec
from env0_posttrain.train import lora_sft
from env0_posttrain.train.gpu.kernels import (
    KernelChoice,
    KernelError,
    KernelStatus,
    check_kernels,
    probe_kernels,
    uses_linear_attention,
)
from env0_posttrain.train.gpu.memory_plan import (
    headroom_gib,
    memory_budget_gib,
    MemoryPlan,
    ModelShape,
    checkpointed_indices,
    checkpointing_settings,
    plan_memory,
    plan_option,
    predicted_microbatch_s,
    predicted_peak_gib,
)

TINY_QWEN3_5 = dict(
    vocab_size=512, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=2,
    num_key_value_heads=1, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=2, linear_key_head_dim=8,
    linear_value_head_dim=8, linear_conv_kernel_dim=4, max_position_embeddings=256, tie_word_embeddings=False,
    layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"],
    pad_token_id=0, eos_token_id=1,
)
# Qwen3.5-9B's text tower with the seeds' LoRA (r 32 on seven projections), counted on the meta device.
NINE_B = ModelShape(n_params=8_953_803_264, trainable_params=58_195_968, num_layers=32, hidden_size=4096, tokens=8192)
H100_GIB = 79.19  # torch's total_memory of an H100 80GB HBM3
CUDA = KernelStatus(cuda=True, device_name="NVIDIA H100 80GB HBM3", capability=(9, 0), fla=True, liger=True,
                    triton="3.7.1")


def tiny_qwen3_5(seed: int = 0):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(AutoConfig.for_model("qwen3_5_text", **TINY_QWEN3_5))


# kernels -------------------------------------------------------------------------------------
def test_qwen3_5_on_cuda_without_fla_stops_naming_the_package_and_the_cost():
    status = CUDA.model_copy(update={"fla": False, "fla_error": "flash-linear-attention is not installed"})
    with pytest.raises(KernelError) as err:
        check_kernels(LoraSpec(), status, linear_attention=True)
    message = str(err.value)
    assert "flash-linear-attention" in message and "56.4 s/step" in message and "11.4 s/step" in message
    assert "allow_slow_kernels" in message and ".[gpu]" in message
    slow = check_kernels(LoraSpec(allow_slow_kernels=True), status, linear_attention=True)
    assert not slow.fla and slow.memory_kind == "torch" and "56.4" in slow.notes[0]
    # Packed rows cannot be kept apart by the torch path at all: no way around it.
    with pytest.raises(KernelError, match="packing"):
        check_kernels(LoraSpec(allow_slow_kernels=True, packing=True), status, linear_attention=True)
    with pytest.raises(KernelError, match="causal-conv1d.*no wheel"):  # fla alone does not keep conv inputs apart
        check_kernels(LoraSpec(packing=True), CUDA, linear_attention=True)
    assert check_kernels(LoraSpec(packing=True), CUDA.model_copy(update={"causal_conv1d": True}), True).fla
    # A model without Gated DeltaNet layers does not need fla.
    assert check_kernels(LoraSpec(), status, linear_attention=False).use_liger


def test_fla_on_hopper_needs_triton_3_7_1_or_tilelang():
    old = CUDA.model_copy(update={"triton": "3.6.0"})
    with pytest.raises(KernelError, match=r"Triton 3\.6\.0.*3\.7\.1"):
        check_kernels(LoraSpec(allow_slow_kernels=True), old, linear_attention=True)
    assert check_kernels(LoraSpec(), old.model_copy(update={"tilelang": True}), linear_attention=True).fla
    assert check_kernels(LoraSpec(), old.model_copy(update={"capability": (8, 0)}), linear_attention=True).fla
    assert check_kernels(LoraSpec(), CUDA, linear_attention=True).fla  # 3.7.1: torch 2.13.0's own Triton


def test_liger_is_on_by_default_exactly_on_cuda():
    assert check_kernels(LoraSpec(), CUDA, True).use_liger
    assert not check_kernels(LoraSpec(use_liger=False), CUDA, True).use_liger
    assert not check_kernels(LoraSpec(use_liger=True), KernelStatus(cuda=False, liger=True), True).use_liger
    missing = CUDA.model_copy(update={"liger": False})
    with pytest.raises(KernelError, match="liger-kernel.*10.1 s/step"):
        check_kernels(LoraSpec(), missing, True)
    assert not check_kernels(LoraSpec(use_liger=False), missing, True).use_liger
    assert not check_kernels(LoraSpec(allow_slow_kernels=True), missing, True).use_liger
    with pytest.raises(KernelError, match="use_liger: true"):  # asked for explicitly: never silently dropped
        check_kernels(LoraSpec(use_liger=True, allow_slow_kernels=True), missing, True)


def _fake_fla(monkeypatch, with_function: bool = True):
    for name in ("fla", "fla.ops", "fla.ops.gated_delta_rule"):
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
        monkeypatch.setitem(sys.modules, name, module)
    if with_function:
        sys.modules["fla.ops.gated_delta_rule"].chunk_gated_delta_rule = lambda *a, **k: None


def test_probe_imports_what_transformers_imports(monkeypatch):
    monkeypatch.setitem(sys.modules, "fla", None)  # not importable
    status = probe_kernels(cuda=False)
    assert not status.fla and "not installed" in status.fla_error
    _fake_fla(monkeypatch, with_function=False)
    status = probe_kernels(cuda=False)
    assert not status.fla and "chunk_gated_delta_rule" in status.fla_error
    _fake_fla(monkeypatch)
    assert probe_kernels(cuda=False).fla


def test_train_lora_on_cuda_stops_before_writing_anything(monkeypatch, tmp_path):
    import torch

    tiny_qwen3_5().config.save_pretrained(tmp_path / "base")
    monkeypatch.setitem(sys.modules, "fla", None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    out = tmp_path / "out"
    with pytest.raises(KernelError, match="flash-linear-attention"):
        lora_sft.train_lora([{"input_ids": [2, 3]}], None, LoraSpec(), tmp_path / "base", out)
    assert not out.exists()


def test_config_detection_of_gated_deltanet_layers():
    assert uses_linear_attention(tiny_qwen3_5().config)
    from transformers import Qwen3Config

    assert not uses_linear_attention(Qwen3Config(num_hidden_layers=2))


def test_spec_fields_round_trip_and_default_to_auto():
    spec = RunSpec(run_id="g", lora={"gpu_memory_gb": 40, "allow_slow_kernels": True})
    assert spec.lora.use_liger is None and spec.lora.gradient_checkpointing is None
    assert RunSpec.model_validate(json.loads(spec.model_dump_json())).lora.gpu_memory_gb == 40.0
    with pytest.raises(ValueError):
        LoraSpec(gpu_memory_gb=0)


# memory plan ---------------------------------------------------------------------------------
def test_the_model_reproduces_the_measured_h100_peaks():
    assert predicted_peak_gib(NINE_B, 0) == pytest.approx(75.1, abs=0.2)
    assert predicted_peak_gib(NINE_B, 32) == pytest.approx(22.5, abs=0.2)
    assert predicted_peak_gib(NINE_B, 32, offload=True) < predicted_peak_gib(NINE_B, 32)
    # Each kernel set the model knows costs what was measured with full checkpointing.
    assert predicted_peak_gib(NINE_B.model_copy(update={"kernels": "fla"}), 32) == pytest.approx(23.0, abs=0.2)
    assert predicted_peak_gib(NINE_B.model_copy(update={"kernels": "torch"}), 32) == pytest.approx(25.1, abs=0.2)


def test_the_time_model_reproduces_the_measured_h100_steps():
    """s/step = 8 micro-batches; measured 7.22 (none), 7.98 (8 layers), 8.67 (16), 10.21 (32)."""
    for n, measured in ((0, 7.22), (8, 7.98), (16, 8.67), (32, 10.21)):
        assert 8 * predicted_microbatch_s(NINE_B, n) == pytest.approx(measured, rel=0.01)
    assert predicted_microbatch_s(NINE_B, 32, offload=True) > predicted_microbatch_s(NINE_B, 32)
    assert predicted_peak_gib(NINE_B, 16) == pytest.approx(48.1, rel=0.04)  # every:2, measured
    assert predicted_peak_gib(NINE_B, 8) == pytest.approx(62.1, rel=0.04)  # every:4, measured


@pytest.mark.parametrize(("budget", "mode", "n", "offload"), [
    (H100_GIB, "partial", 3, False),  # 80 GB: no checkpointing (74.9 predicted) ran out of memory on the H100
    (60.0, "partial", 13, False),  # 13 of 32 layers: every-k-th could only have chosen 16
    (40.0, "partial", 24, False),  # 24 of 32: every-k-th could only have chosen all 32
    (23.0, "full", 32, True),  # full checkpointing's 22.5 does not leave the headroom: inputs to host memory
])
def test_the_fastest_option_that_fits_the_budget(budget, mode, n, offload):
    plan = plan_memory(NINE_B, budget)
    assert (plan.mode, plan.checkpointed_layers, plan.offload, plan.fits, plan.source) == (
        mode, n, offload, True, "memory model")
    assert plan.predicted_peak_gib <= budget - headroom_gib(budget) and len(plan.layers) == n
    assert plan.options_gib["none"] == pytest.approx(75.1, abs=0.2) and "full+offload" in plan.options_gib


def test_at_40_gib_the_plan_uses_the_budget_and_beats_full_checkpointing():
    plan, full = plan_memory(NINE_B, 40.0), plan_option(NINE_B, 32, False, 40.0)
    one_more_layer_kept = plan_option(NINE_B, plan.checkpointed_layers - 1, False, 40.0)
    assert plan.predicted_peak_gib > 0.9 * (40.0 - headroom_gib(40.0)) and not one_more_layer_kept.fits
    assert 8 * plan.predicted_microbatch_s < 8 * full.predicted_microbatch_s - 0.7  # about 0.8 s/step faster
    assert plan.layers == checkpointed_indices(32, 24) and plan.layers[:4] == [0, 1, 2, 4]


def test_more_memory_never_means_more_checkpointing():
    budgets = [21.0 + 2 * i for i in range(36)]
    plans = [plan_memory(NINE_B, b) for b in budgets]
    layers = [p.checkpointed_layers for p in plans]
    assert layers == sorted(layers, reverse=True) and layers[0] == 32 and layers[-1] == 0
    assert len(set(layers)) > 20  # any k of n: nearly every budget step changes the plan
    assert [p.predicted_microbatch_s for p in plans] == sorted((p.predicted_microbatch_s for p in plans), reverse=True)


def test_nothing_fits_and_the_spec_overrides():
    tight = plan_memory(NINE_B, 16.0)
    assert (tight.mode, tight.offload, tight.fits) == ("full", True, False)
    assert plan_memory(NINE_B, 40.0, forced=False).mode == "none" and not plan_memory(NINE_B, 40.0, forced=False).fits
    forced = plan_memory(NINE_B, H100_GIB, forced=True)
    assert (forced.mode, forced.source, forced.offload) == ("full", "spec", False)
    half = ModelShape(**(NINE_B.model_dump() | {"tokens": 4096}))  # shorter rows: fewer layers checkpointed
    assert plan_memory(half, 40.0).checkpointed_layers < plan_memory(NINE_B, 40.0).checkpointed_layers


def test_settings_for_each_mode():
    assert checkpointing_settings(None)["gradient_checkpointing"] is False
    s = checkpointing_settings(plan_memory(NINE_B, 60.0))
    assert s == {"gradient_checkpointing": True, "gradient_checkpointing_kwargs": {"use_reentrant": False},
                 "checkpoint_layers": checkpointed_indices(32, 13)}
    s = checkpointing_settings(plan_memory(NINE_B, 23.0))
    assert s["gradient_checkpointing_kwargs"] == {"use_reentrant": False, "offload": True}
    assert s["checkpoint_layers"] is None  # every layer: transformers' own flags
    assert checkpointed_indices(32, 16) == list(range(0, 32, 2)) and checkpointed_indices(4, 3) == [0, 1, 2]
    assert checkpointed_indices(32, 0) == [] and checkpointed_indices(5, 5) == [0, 1, 2, 3, 4]


def test_apply_memory_plan_uses_the_devices_memory_unless_the_spec_sets_a_budget(monkeypatch, tmp_path):
    model = tiny_qwen3_5()
    kernels = KernelChoice(cuda=True, linear_attention=True, fla=True, use_liger=True, flash_attn=False)
    cuda_device = {"use_cpu": False, "bf16": True}
    monkeypatch.setattr(lora_sft, "device_memory_gib", lambda: 80.0)
    plan = lora_sft.apply_memory_plan(LoraSpec(), dict(cuda_device), model, kernels)
    assert plan.budget_gib == 80.0 and plan.mode == "none"
    # A budget below the tiny model's peak with no checkpointing: checkpointing is switched on in the settings.
    none_peak = predicted_peak_gib(ModelShape.of(model, LoraSpec().max_seq_length, 2, "fla+liger"), 0)
    device = dict(cuda_device)
    plan = lora_sft.apply_memory_plan(LoraSpec(gpu_memory_gb=none_peak + 2.0 - 1e-4), device, model, kernels)
    assert plan.mode != "none" and device["gradient_checkpointing"] and plan.budget_gib < 80
    cfg = lora_sft.build_sft_config(LoraSpec(), tmp_path, False, device | {"use_cpu": True, "bf16": False,
                                    "padding_free": False, "use_liger_kernel": False})
    assert cfg.activation_checkpointing and cfg.activation_checkpointing_kwargs == device["gradient_checkpointing_kwargs"]
    assert lora_sft.apply_memory_plan(LoraSpec(), {"use_cpu": True}, model, kernels) is None
    # "80 GB" on an H100 (79.19 GiB): the plan fills what the device holds, not what the spec wishes
    monkeypatch.setattr(lora_sft, "device_memory_gib", lambda: H100_GIB)
    assert lora_sft.apply_memory_plan(LoraSpec(gpu_memory_gb=80.0), dict(cuda_device), model, kernels).budget_gib == H100_GIB
    assert plan_memory(NINE_B, memory_budget_gib(80.0, H100_GIB)).predicted_peak_gib <= H100_GIB - headroom_gib(H100_GIB)
    assert headroom_gib(H100_GIB) == pytest.approx(6.34, abs=0.01) and headroom_gib(10.0) == 2.0
    assert memory_budget_gib(40.0, H100_GIB) == 40.0 and memory_budget_gib(None, None) is None
    assert isinstance(MemoryPlan.model_validate(plan.model_dump()), MemoryPlan) and "GiB" in plan.describe()


# partial checkpointing on the real decoder layers ----------------------------------------------
def _lora_grads(model, ids):
    """LoRA gradients of one step, and the bytes autograd kept outside checkpointed regions for the backward."""
    import torch

    model.train()
    model.zero_grad()
    kept = [0]

    def pack(t):
        kept[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}, kept[0]


def test_any_k_of_n_layers_checkpointed_gives_the_same_gradients_and_keeps_less():
    import torch
    from peft import get_peft_model

    from env0_posttrain.train.gpu.layer_checkpointing import decoder_layers, set_checkpointed_layers

    lora = LoraSpec(r=4, alpha=8, dropout=0.0)
    ids = torch.randint(2, 512, (1, 48), generator=torch.Generator().manual_seed(1))
    reference, kept = None, {}
    for n in (0, 1, 3, 4):
        model = get_peft_model(tiny_qwen3_5(), lora_sft.build_lora_config(lora))
        calls = [0] * 4
        if n:
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
            flags = set_checkpointed_layers(model, checkpointed_indices(4, n))
            for i, layer in enumerate(decoder_layers(model)):
                inner = layer._gradient_checkpointing_func

                def counted(fn, *args, _i=i, _inner=inner, **kw):
                    calls[_i] += 1
                    return _inner(fn, *args, **kw)

                layer._gradient_checkpointing_func = counted
            assert flags == [i in checkpointed_indices(4, n) for i in range(4)]
        grads, kept[n] = _lora_grads(model, ids)
        assert calls == {0: [0, 0, 0, 0], 1: [1, 0, 0, 0], 3: [1, 1, 1, 0], 4: [1, 1, 1, 1]}[n]
        if reference is None:
            reference = grads
        assert grads.keys() == reference.keys() and all(torch.allclose(grads[k], reference[k], atol=1e-6) for k in grads)
    assert kept[0] > kept[1] > kept[3] > kept[4]  # each checkpointed layer keeps only its input
    with pytest.raises(ValueError, match="4 decoder layers"):
        set_checkpointed_layers(get_peft_model(tiny_qwen3_5(), lora_sft.build_lora_config(lora)), [5])
    with pytest.raises(RuntimeError, match="enable activation checkpointing"):
        set_checkpointed_layers(tiny_qwen3_5(), [0])


def test_the_trainer_checkpoints_the_plans_layers(tmp_path):
    from datasets import Dataset
    from peft import get_peft_model
    from trl import SFTTrainer

    from env0_posttrain.train.gpu.layer_checkpointing import LayerCheckpointing, decoder_layers
    from env0_posttrain.train.tiny_student.tokenizer import build_tokenizer

    lora = LoraSpec(r=4, alpha=8, dropout=0.0, max_steps=1, grad_accumulation=1, save_steps=10, logging_steps=1,
                    eval_fraction=0.0, max_seq_length=64, report_to=[])
    shape = ModelShape(n_params=10**6, trainable_params=10**4, num_layers=4, hidden_size=32, tokens=64)
    plan = plan_option(shape, 3, False, None)
    device = lora_sft.resolve_device_settings(lora) | checkpointing_settings(plan)
    model = get_peft_model(tiny_qwen3_5(), lora_sft.build_lora_config(lora))
    ids = [[2 + (i * 7 + j) % 500 for j in range(32)] for i in range(2)]
    trainer = SFTTrainer(model=model, args=lora_sft.build_sft_config(lora, tmp_path, False, device, token_rows=True),
                         train_dataset=Dataset.from_dict({"input_ids": ids, "labels": ids}),
                         processing_class=build_tokenizer(["bench"], [], 300),
                         callbacks=[LayerCheckpointing(device["checkpoint_layers"])])
    trainer.train()
    assert [layer.gradient_checkpointing for layer in decoder_layers(model)] == [True, True, True, False]


# padding-free ------------------------------------------------------------------------------------
def test_padding_free_only_where_every_layer_keeps_rows_apart():
    def choice(**kw):
        return KernelChoice(**({"cuda": True, "linear_attention": True, "fla": True, "use_liger": True,
                                "flash_attn": True, "causal_conv1d": True} | kw))

    batch4 = LoraSpec(per_device_batch_size=4)
    assert lora_sft.padding_free_supported(batch4, choice())
    assert not lora_sft.padding_free_supported(LoraSpec(), choice())  # batch 1 has no padding to save
    assert not lora_sft.padding_free_supported(batch4, choice(fla=False))  # DeltaNet needs cu_seqlens
    assert not lora_sft.padding_free_supported(batch4, choice(causal_conv1d=False))  # its conv needs seq_idx
    assert not lora_sft.padding_free_supported(batch4, choice(flash_attn=False))  # sdpa: dense block mask
    assert lora_sft.padding_free_supported(batch4, choice(fla=False, causal_conv1d=False, linear_attention=False))
    assert not lora_sft.padding_free_supported(batch4, choice(cuda=False))  # DeltaNet's torch path mixes rows
    assert not lora_sft.padding_free_supported(batch4.model_copy(update={"packing": True}), choice())
    # CPU, attention layers only: sdpa's block mask keeps rows apart, while the batch's mask stays small
    cpu = choice(cuda=False, linear_attention=False, fla=False, causal_conv1d=False, flash_attn=False)
    assert lora_sft.padding_free_supported(batch4.model_copy(update={"max_seq_length": 2048}), cpu)
    assert not lora_sft.padding_free_supported(batch4, cpu)  # 4 x 8192 tokens: a 4 GiB mask
    assert not lora_sft.padding_free_supported(LoraSpec(), cpu)


def test_cpu_padding_free_batches_compute_what_padded_batches_compute():
    """Why CPU training may drop the pads: transformers' sdpa path turns the restarting position ids into a block
    mask, so a concatenated batch gives every row the logits and the loss it gets padded."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen3Config
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(Qwen3Config(
        vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16), attn_implementation="sdpa")
    rows = [{"input_ids": torch.randint(3, 300, (n,)).tolist()} for n in (37, 120, 5, 90)]
    padded = DataCollatorForLanguageModeling(pad_token_id=0)(rows)
    flat = DataCollatorForLanguageModeling(pad_token_id=0, padding_free=True)(rows)
    assert flat["input_ids"].shape == (1, 252) and "attention_mask" not in flat
    # use_cache=False as TRL's compute_loss (and WeightedSFTTrainer) pass it: with a cache the mask ignores positions
    with torch.no_grad():
        a = model(input_ids=padded["input_ids"], attention_mask=padded["attention_mask"], labels=padded["labels"],
                  use_cache=False)
        b = model(input_ids=flat["input_ids"], position_ids=flat["position_ids"], labels=flat["labels"],
                  use_cache=False)
        mixed = model(input_ids=flat["input_ids"], position_ids=flat["position_ids"], use_cache=True).logits[0]
    per_row = torch.cat([a.logits[i, : len(r["input_ids"])] for i, r in enumerate(rows)])
    assert torch.allclose(per_row, b.logits[0], atol=1e-4) and a.loss.item() == pytest.approx(b.loss.item(), abs=1e-5)
    assert not torch.allclose(per_row, mixed, atol=1e-4)  # rows attending across each other: the check can fail


def test_concatenated_rows_need_the_deltanet_kernels():
    """Why the rule above asks for fla and causal-conv1d: transformers' torch paths refuse seq_idx / cu_seqlens."""
    import torch
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    batch = DataCollatorForLanguageModeling(pad_token_id=0, padding_free=True)(
        [{"input_ids": [2, 3, 4, 5]}, {"input_ids": [6, 7, 8]}])
    assert batch["input_ids"].shape == (1, 7) and batch["position_ids"].tolist() == [[0, 1, 2, 3, 0, 1, 2]]
    assert batch["seq_idx"].tolist() == [[0, 0, 0, 0, 1, 1, 1]] and batch["cu_seq_lens_q"].tolist() == [0, 4, 7]
    status = probe_kernels(cuda=False)
    if status.fla and status.causal_conv1d:
        pytest.skip("both kernels are installed here")
    with pytest.raises(ValueError, match="can't keep packed sequences apart"), torch.no_grad():
        tiny_qwen3_5()(**{k: v for k, v in batch.items() if k != "labels"})


def test_the_adapter_stage_shows_the_choice_in_its_metadata():
    from env0_posttrain.stages.lora_adapter import _checkpointing_note

    assert _checkpointing_note(None) == "none (CPU)"
    assert _checkpointing_note(plan_memory(NINE_B, 60.0).model_dump(mode="json")).startswith(
        "13 of 32 layers checkpointed: predicted peak 54.8 of 60.0 GiB, 1.17x the step time without checkpointing")
