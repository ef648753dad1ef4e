"""LoRA steps on CPU, padded batches vs padding-free: seconds per step and losses.

Trains the same rows twice from the same seed, once per batch layout, on a stored run's SFT rows and its
base (default: the demo's, after `env0-posttrain demo`). Padding-free concatenates a batch's rows and keeps
them apart with sdpa's block mask (transformers builds it from the restarting position ids), so both layouts
compute the same losses; the pad tokens go, but attention runs over the whole batch under a dense mask.
`lora_sft.padding_free_supported` chooses padding-free on CPU because of what this measured.

    .venv/bin/python bench/lora_cpu_bench.py --data-dir data --run-id demo --steps 40
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import LoraSpec
from env0_posttrain.store import Store
from env0_posttrain.train import lora_sft


def run(rows: list[dict], base: Path, lora: LoraSpec, padding_free: bool, work: Path) -> dict:
    original = lora_sft.padding_free_supported
    lora_sft.padding_free_supported = lambda spec, kernels: padding_free
    try:
        t0 = time.perf_counter()
        result = lora_sft.train_lora(rows, None, lora, base, work, resume=False)
        wall = time.perf_counter() - t0
    finally:
        lora_sft.padding_free_supported = original
    return {"layout": "padding-free" if padding_free else "padded", "s/step": result.runtime_s / lora.max_steps,
            "train s": result.runtime_s, "wall s": wall, "non-pad tokens": result.train_tokens,
            "first loss": result.first_train_loss, "final loss": result.final_train_loss,
            "eval loss": result.final_eval_loss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default="data")
    ap.add_argument("--run-id", default="demo")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=1, help="alternate the two layouts this many times")
    args = ap.parse_args()
    paths = Paths(Path(args.data_dir).resolve())
    store = Store(paths.db)
    spec = store.get_run(args.run_id)
    if spec is None:
        raise SystemExit(f"no run {args.run_id!r} in {paths.db}")
    rows = store.load_sft_rows(args.run_id)
    from env0_posttrain.stages.base_model import base_student

    base = base_student(spec, store, args.run_id, paths)
    lora = spec.lora.model_copy(update={"max_steps": args.steps, "save_steps": args.steps, "epochs": None})
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            for padding_free in (False, True):
                work = Path(tmp) / f"{i}-{padding_free}"
                table.append(run(rows, base, lora, padding_free, work))
                shutil.rmtree(work, ignore_errors=True)
    print(f"{len(rows)} rows of run {args.run_id}, batch {lora.per_device_batch_size}, {args.steps} steps")
    print(tabulate(table, headers="keys", floatfmt=".4g"))


if __name__ == "__main__":
    main()
