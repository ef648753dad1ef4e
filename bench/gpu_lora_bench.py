"""The LoRA step on whatever GPU is here: kernels x checkpointing x row layout -> s/step, 300-step time,
peak memory (measured and as the memory model predicts it), tokens/s and MFU against the device's bf16 peak.

The model is a Qwen3.5-9B-shaped text tower built from its config with random weights (no download):
speed and memory do not depend on the weights' values. Every row goes through the project's own
settings (`train.lora_sft`: kernel check, memory plan, TRL SFTTrainer + PEFT, bf16) at seq 8192,
batch 1 x grad-acc 8 on pre-tokenized random rows. "chosen" is the mode `train_lora` would pick for
the device's memory (or `--gpu-memory-gb`). The kernels are what is installed: fla is bound when
transformers imports the model, so compare kernel sets across runs (`pip install -e '.[gpu]'`).

    python bench/gpu_lora_bench.py                               # chosen, full, none on the 9B shape
    python bench/gpu_lora_bench.py --modes chosen,every:2,offload --liger both --gpu-memory-gb 40
    python bench/gpu_lora_bench.py --batch 4 --layouts padded,padding_free,packing   # rows of varied length
    python bench/gpu_lora_bench.py --cpu-tiny                    # no GPU: a tiny shape on CPU, checks the code

MFU counts 4 x matmul parameters x tokens per step (forward 2, backward through the frozen weights 2; no
recompute, attention scores or DeltaNet scans), against the dense bf16 peak in PEAK_BF16_TFLOPS.
Goals: on one H100, 300 steps <= 40 min at peak <= 40 GB, <= 36 min with 80 GB.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

QWEN3_5_9B = dict(
    vocab_size=248320, hidden_size=4096, intermediate_size=12288, num_hidden_layers=32, num_attention_heads=16,
    num_key_value_heads=4, head_dim=256, linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
    linear_value_head_dim=128, linear_conv_kernel_dim=4, max_position_embeddings=32768, tie_word_embeddings=False,
    layer_types=["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(32)],
)
TINY = dict(
    vocab_size=1024, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
    linear_value_head_dim=16, linear_conv_kernel_dim=4, max_position_embeddings=1024, tie_word_embeddings=False,
    layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"],
)
# Dense bf16 tensor-core peaks (TFLOP/s, no sparsity), matched in order against torch's device name.
PEAK_BF16_TFLOPS = [
    ("H100 PCIe", 756.0), ("H100 NVL", 835.0), ("GH200", 989.0), ("H200", 989.0), ("H100", 989.0), ("H800", 989.0),
    ("B200", 2250.0), ("A100", 312.0), ("A800", 312.0), ("L40S", 362.0), ("L4", 121.0), ("A10", 125.0),
    ("RTX 4090", 165.0),
]
LAYOUTS = {
    "padded": "each micro-batch padded to its longest row; the pad tokens cost compute and memory and count in "
              "neither tokens/s nor MFU",
    "padding_free": "TRL's padding_free: the micro-batch's rows concatenated into one sequence, positions restarting "
                    "per row, cu_seqlens/seq_idx passed to the kernels; no pad tokens. Needs flash-attention's varlen "
                    "kernel for attention layers (sdpa builds a dense (batch x seq)^2 mask) and fla + causal-conv1d "
                    "for Gated DeltaNet layers (transformers raises otherwise)",
    "packing": "TRL's packing (BFD): rows packed into bins of max_length tokens, then trained padding-free, so a "
               "micro-batch holds more tokens and an epoch has fewer steps; same kernel needs as padding_free; a row "
               "longer than max_length is truncated",
}


def peak_tflops(device_name: str) -> float | None:
    return next((tf for key, tf in PEAK_BF16_TFLOPS if key in device_name), None)


class StepTimer:
    """Per optimizer step: wall time (after a CUDA sync) and non-pad tokens seen."""

    def __init__(self):
        self.times: list[float] = []
        self.tokens: list[int] = []

    def callback(self):
        from transformers import TrainerCallback

        timer = self

        class _CB(TrainerCallback):
            def on_step_begin(self, args, state, control, **kw):
                timer._sync()
                timer._t, timer._seen = time.perf_counter(), state.num_input_tokens_seen or 0

            def on_step_end(self, args, state, control, **kw):
                timer._sync()
                timer.times.append(time.perf_counter() - timer._t)
                timer.tokens.append(int((state.num_input_tokens_seen or 0) - timer._seen))

        return _CB()

    @staticmethod
    def _sync():
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()


def rows(n: int, seq: int, vocab: int, varied: bool, seed: int = 0) -> list[list[int]]:
    """Random token rows: all `seq` long (batch 1), or uniform in [seq/8, seq] when the batch has > 1 row."""
    rng = random.Random(seed)
    return [[rng.randrange(2, vocab) for _ in range(rng.randint(seq // 8, seq) if varied else seq)] for _ in range(n)]


def mode_plan(mode: str, shape, budget, lora, device, model, kernels):
    """chosen (what train_lora picks), none, full, offload (full + inputs offloaded), layers:N (N of the layers,
    spread evenly), layers:N+offload, every:K (as many layers as transformers' every_n_layers=K checkpoints)."""
    from env0_posttrain.train.lora_sft import apply_memory_plan
    from env0_posttrain.train.gpu.memory_plan import plan_memory, plan_option

    if mode == "chosen":  # what train_lora does; on CPU (no plan there) what the model says for no budget
        return apply_memory_plan(lora, device, model, kernels) or plan_memory(shape, budget)
    L = shape.num_layers
    if mode.startswith("every:"):
        return plan_option(shape, -(-L // int(mode.split(":")[1])), False, budget)
    if mode.startswith("layers:"):
        n, _, off = mode.split(":")[1].partition("+")
        return plan_option(shape, int(n), off == "offload", budget)
    return {"none": lambda: plan_option(shape, 0, False, budget), "full": lambda: plan_option(shape, L, False, budget),
            "offload": lambda: plan_option(shape, L, True, budget)}[mode]()


def run_row(args, config_shape, liger: bool, mode: str, layout: str, status) -> dict:
    import torch
    from datasets import Dataset
    from peft import get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM, PrinterCallback
    from trl import SFTTrainer

    from env0_posttrain.spec.runspec import LoraSpec
    from env0_posttrain.train.gpu.kernels import check_kernels
    from env0_posttrain.train.lora_sft import build_lora_config, build_sft_config, resolve_device_settings
    from env0_posttrain.train.gpu.memory_plan import ModelShape, checkpointing_settings, device_memory_gib, memory_budget_gib
    from env0_posttrain.train.tiny_student.tokenizer import build_tokenizer

    cuda = torch.cuda.is_available()
    lora = LoraSpec(max_seq_length=args.seq, grad_accumulation=args.grad_acc, max_steps=args.steps, save_steps=10**6,
                    logging_steps=1, use_liger=liger, eval_fraction=0.0, allow_slow_kernels=True,
                    per_device_batch_size=args.batch, packing=layout == "packing", gpu_memory_gb=args.gpu_memory_gb)
    if "offload" in mode and not cuda:
        raise RuntimeError("activation offloading moves GPU activations to host memory: nothing to move on CPU")
    kernels = check_kernels(lora, status, linear_attention=True)
    device = resolve_device_settings(lora, kernels)
    device["padding_free"] = layout == "padding_free"
    attn = "flash_attention_2" if cuda and status.flash_attn and layout != "padded" else "sdpa"
    config = AutoConfig.for_model("qwen3_5_text", **config_shape, pad_token_id=0, eos_token_id=1)
    config._attn_implementation = attn
    with torch.device("cuda" if cuda else "cpu"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16 if device["bf16"] else torch.float32)
    model = get_peft_model(model, build_lora_config(lora))
    shape = ModelShape.of(model, args.batch * args.seq, 2 if device["bf16"] else 4, kernels.memory_kind)
    budget = memory_budget_gib(args.gpu_memory_gb, device_memory_gib())
    plan = mode_plan(mode, shape, budget, lora, device, model, kernels)
    device.update(checkpointing_settings(plan))
    n = args.steps * args.grad_acc * args.batch * (3 if layout == "packing" else 1)
    ids = rows(n, args.seq, config_shape["vocab_size"], varied=args.batch > 1)
    timer = StepTimer()
    callbacks = [timer.callback()]
    if device.get("checkpoint_layers") is not None:
        from env0_posttrain.train.gpu.layer_checkpointing import LayerCheckpointing

        callbacks.append(LayerCheckpointing(device["checkpoint_layers"]))
    with tempfile.TemporaryDirectory() as out:
        trainer = SFTTrainer(model=model, args=build_sft_config(lora, Path(out), False, device, token_rows=True),
                             train_dataset=Dataset.from_dict({"input_ids": ids, "labels": ids}),
                             processing_class=build_tokenizer(["bench"], [], 300), callbacks=callbacks)
        trainer.remove_callback(PrinterCallback)  # the table is the output
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        try:
            trainer.train()
        except torch.OutOfMemoryError as err:  # the row names the plan the memory model chose
            raise RuntimeError(f"out of memory on the plan '{plan.describe()}' (options: {plan.options_gib}): "
                               f"{str(err)[:120]}") from None
    steady_t, steady_tok = (timer.times[1:], timer.tokens[1:]) if len(timer.times) > 1 else (timer.times, timer.tokens)
    step_s = statistics.median(steady_t)
    tokens_s = sum(steady_tok) / sum(steady_t)
    matmul = shape.n_params - config_shape["vocab_size"] * config_shape["hidden_size"]  # input embeddings: a lookup
    peak = peak_tflops(torch.cuda.get_device_name()) if cuda else None
    result = {
        "kernels": ("fla" if kernels.fla else "torch") + ("+liger" if device["use_liger_kernel"] else ""),
        "checkpointing": mode if mode != "chosen" else "chosen: " + (
            f"{plan.checkpointed_layers}/{plan.num_layers} layers" if plan.mode == "partial" else plan.mode) + (
            "+offload" if plan.offload else ""),
        "layout": layout, "attn": attn, "first_step_s": timer.times[0], "step_s": step_s,
        "steps_300_min": step_s * 300 / 60, "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        "reserved_gib": torch.cuda.max_memory_reserved() / 2**30 if cuda else None,
        "model_gib": plan.predicted_peak_gib, "model_step_s": plan.predicted_microbatch_s * args.grad_acc,
        "tokens_per_s": tokens_s,
        "mfu": 4 * matmul * tokens_s / (peak * 1e12) if peak else None, "plan": plan.model_dump(),
    }
    del trainer, model
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return result


def fmt(v, spec: str) -> str:
    if v is None:
        return "n/a"
    return format(v, spec) if abs(v) >= 1 or v == 0 else format(v, ".3f")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu-tiny", action="store_true", help="scaled-down model, seq and steps; runs on CPU")
    ap.add_argument("--steps", type=int, default=None, help="optimizer steps per row (default 6; 3 with --cpu-tiny)")
    ap.add_argument("--seq", type=int, default=None, help="max tokens per row (default 8192; 256 with --cpu-tiny)")
    ap.add_argument("--grad-acc", type=int, default=8)
    ap.add_argument("--batch", type=int, default=1, help="rows per micro-batch; > 1 uses rows of varied length")
    ap.add_argument("--modes", default="chosen,full,none",
                    help="comma list of chosen, none, full, offload, every:K, layers:N, layers:N+offload")
    ap.add_argument("--liger", choices=["on", "off", "both"], default="on")
    ap.add_argument("--layouts", default="padded", help=f"comma list of {', '.join(LAYOUTS)} (batch > 1)")
    ap.add_argument("--gpu-memory-gb", type=float, default=None, help="budget for 'chosen' (default: the device's)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = ap.parse_args()

    import datasets
    import torch
    import transformers

    from env0_posttrain.train.gpu.kernels import probe_kernels

    datasets.disable_progress_bars()
    transformers.logging.set_verbosity_error()

    cuda = torch.cuda.is_available()
    status = probe_kernels(cuda)
    if not cuda and not args.cpu_tiny:
        raise SystemExit("No CUDA GPU found: nothing to measure here. Kernels importable: "
                         f"fla={status.fla}, liger={status.liger}, flash_attn={status.flash_attn}, "
                         f"causal_conv1d={status.causal_conv1d}. Run with --cpu-tiny to exercise the code path.")
    shape = TINY if args.cpu_tiny else QWEN3_5_9B
    args.seq = args.seq or (256 if args.cpu_tiny else 8192)
    args.steps = args.steps or (3 if args.cpu_tiny else 6)
    name = torch.cuda.get_device_name() if cuda else "cpu (no CUDA GPU found; tiny shape, timings meaningless)"
    print(f"device: {name}; bf16 peak: {fmt(peak_tflops(name) if cuda else None, '.0f')} TFLOP/s; torch "
          f"{torch.__version__}, triton {status.triton}; fla: {status.fla_error or 'yes'}; liger: {status.liger}; "
          f"flash_attn: {status.flash_attn}; causal_conv1d: {status.causal_conv1d}")
    print(f"shape: {'tiny' if args.cpu_tiny else 'Qwen3.5-9B'}, seq {args.seq}, batch {args.batch} x grad-acc "
          f"{args.grad_acc}, {args.steps} steps per row (the first, with Triton autotuning, is left out of s/step)\n")
    results = []
    # Liger patches some of transformers' module-level functions for good: its rows run last.
    for liger in {"on": [True], "off": [False], "both": [False, True]}[args.liger]:
        for layout in args.layouts.split(","):
            for mode in args.modes.split(","):
                try:
                    results.append(run_row(args, shape, liger, mode, layout, status))
                except Exception as err:  # a row a kernel set cannot run (e.g. OOM, packed rows without fla)
                    gc.collect()
                    if cuda:
                        torch.cuda.empty_cache()
                    results.append({"kernels": f"liger={liger}", "checkpointing": mode, "layout": layout,
                                    "error": f"{type(err).__name__}: {str(err)[:160]}"})
    print("| kernels | checkpointing | rows | s/step (model) | 300 steps | peak GiB (model) | tokens/s | MFU |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['kernels']} | {r['checkpointing']} | {r['layout']} | skipped: {r['error']} | | | | |")
            continue
        print(f"| {r['kernels']} | {r['checkpointing']} | {r['layout']} | {r['step_s']:.2f} ({r['model_step_s']:.2f}) | "
              f"{r['steps_300_min']:.1f} min | {fmt(r['peak_gib'], '.1f')} ({fmt(r['model_gib'], '.1f')}) | "
              f"{r['tokens_per_s']:,.0f} | {fmt(r['mfu'] and 100 * r['mfu'], '.1f')}{'' if r['mfu'] is None else ' %'} |")
    chosen = [r for r in results if r.get("checkpointing", "").startswith("chosen")]
    if chosen:
        from env0_posttrain.train.gpu.memory_plan import MemoryPlan

        print(f"\nchosen: {MemoryPlan.model_validate(chosen[0]['plan']).describe()}")
    for layout in args.layouts.split(","):
        print(f"{layout}: {LAYOUTS[layout]}")
    if args.json:
        args.json.write_text(json.dumps({"device": name, "rows": results}, indent=2, default=str))


if __name__ == "__main__":
    main()
