"""Peak memory and step time of the seeds' LoRA recipe on a Qwen3.5-9B-shaped model.

The model is built from its config with random weights (no download): speed and memory do not
depend on the weights' values. It runs through the project's own trainer settings
(`train.lora_sft`: TRL SFTTrainer + PEFT, bf16, gradient checkpointing, padding-free batches,
optional Liger kernels) at seq 8192, batch 1 x grad-acc 8, on pre-tokenized random rows.

    python bench/gpu_lora_bench.py                       # on a GPU: the 9B shape
    python bench/gpu_lora_bench.py --liger               # with Liger kernels (needs liger-kernel)
    python bench/gpu_lora_bench.py --cpu-tiny            # scaled-down shape on CPU: checks the script runs

Goals (issue 6): peak <= 40 GB (an A100 40GB), and 300 steps in <= 1 h on one H100 (seed: 3.24 h).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import tempfile
import time
from pathlib import Path

# Qwen3.5-9B's text tower (transformers' qwen3_5_text defaults match it; spelled out so a changed default cannot move the bench).
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


class StepTimer:
    def __init__(self):
        self.times: list[float] = []
        self._t = None

    def callback(self):
        from transformers import TrainerCallback

        timer = self

        class _CB(TrainerCallback):
            def on_step_begin(self, args, state, control, **kw):
                timer._sync()
                timer._t = time.perf_counter()

            def on_step_end(self, args, state, control, **kw):
                timer._sync()
                timer.times.append(time.perf_counter() - timer._t)

        return _CB()

    @staticmethod
    def _sync():
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()


def kernels_available() -> dict[str, bool]:
    return {name: importlib.util.find_spec(mod) is not None for name, mod in
            [("liger_kernel", "liger_kernel"), ("flash_attn", "flash_attn"), ("fla (flash-linear-attention)", "fla"),
             ("causal_conv1d", "causal_conv1d")]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu-tiny", action="store_true", help="scaled-down model, seq and steps; runs on CPU")
    ap.add_argument("--steps", type=int, default=None, help="optimizer steps to time (default 6; 3 with --cpu-tiny)")
    ap.add_argument("--seq", type=int, default=None, help="tokens per sequence (default 8192; 256 with --cpu-tiny)")
    ap.add_argument("--grad-acc", type=int, default=8)
    ap.add_argument("--liger", action="store_true", help="use Liger kernels (fused linear cross-entropy, RMSNorm, SwiGLU)")
    ap.add_argument("--no-checkpointing", action="store_true")
    ap.add_argument("--attn", default=None, help="attn_implementation (default: flash_attention_2 if installed, else sdpa)")
    ap.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = ap.parse_args()

    import torch
    from datasets import Dataset
    from peft import get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM
    from trl import SFTTrainer

    from env0_posttrain.runspec import LoraSpec
    from env0_posttrain.train.lora_sft import (
        build_lora_config,
        build_sft_config,
        resolve_device_settings,
    )
    from env0_posttrain.train.tokenizer_build import build_tokenizer

    cuda = torch.cuda.is_available()
    if not cuda and not args.cpu_tiny:
        raise SystemExit("no CUDA GPU: run with --cpu-tiny to check the script on CPU")
    shape = TINY if args.cpu_tiny else QWEN3_5_9B
    seq = args.seq or (256 if args.cpu_tiny else 8192)
    steps = args.steps or (3 if args.cpu_tiny else 6)
    lora = LoraSpec(max_seq_length=seq, grad_accumulation=args.grad_acc, max_steps=steps, save_steps=10**6,
                    logging_steps=1, use_liger=args.liger, eval_fraction=0.0,
                    gradient_checkpointing=False if args.no_checkpointing else None)
    device = resolve_device_settings(lora)
    attn = args.attn or ("flash_attention_2" if cuda and importlib.util.find_spec("flash_attn") else "sdpa")
    config = AutoConfig.for_model("qwen3_5_text", **shape, pad_token_id=0, eos_token_id=1)
    config._attn_implementation = attn
    dtype = torch.bfloat16 if device["bf16"] else torch.float32
    t0 = time.perf_counter()
    with torch.device("cuda" if cuda else "cpu"):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    build_s = time.perf_counter() - t0
    n_params = sum(p.numel() for p in model.parameters())
    model = get_peft_model(model, build_lora_config(lora))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)

    g = torch.Generator().manual_seed(0)
    n_rows = steps * lora.grad_accumulation * lora.per_device_batch_size
    ids = torch.randint(2, shape["vocab_size"], (n_rows, seq), generator=g).tolist()
    ds = Dataset.from_dict({"input_ids": ids, "labels": ids})
    tok = build_tokenizer(["bench"], [], 300)
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as out:
        trainer = SFTTrainer(model=model, args=build_sft_config(lora, Path(out), False, device, token_rows=True), train_dataset=ds,
                             processing_class=tok, callbacks=[timer.callback()])
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        trainer.train()
    peak_gb = torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan")
    reserved_gb = torch.cuda.max_memory_reserved() / 2**30 if cuda else float("nan")
    steady = timer.times[1:] or timer.times
    step_s = statistics.median(steady)
    result = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "shape": "tiny" if args.cpu_tiny else "Qwen3.5-9B", "params_b": n_params / 1e9, "trainable_m": trainable / 1e6,
        "seq": seq, "batch": lora.per_device_batch_size, "grad_acc": lora.grad_accumulation, "attn": attn,
        "bf16": device["bf16"], "grad_ckpt": device["gradient_checkpointing"], "padding_free": device["padding_free"],
        "liger": device["use_liger_kernel"], "build_s": build_s, "step_times_s": timer.times, "median_step_s": step_s,
        "tokens_per_s": seq * lora.grad_accumulation * lora.per_device_batch_size / step_s,
        "est_300_steps_h": step_s * 300 / 3600, "peak_alloc_gb": peak_gb, "peak_reserved_gb": reserved_gb,
        "kernels": kernels_available(), "torch": torch.__version__,
    }
    print("\n| metric | value |\n|---|---|")
    for k, v in result.items():
        print(f"| {k} | {round(v, 3) if isinstance(v, float) else v} |")
    print(f"\ngoals: peak <= 40 GB: {peak_gb <= 40 if cuda else 'n/a'}; 300 steps <= 1 h: {step_s * 300 <= 3600}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
