"""One metrics record per logging step, handed to the caller (the training stage stores them in DuckDB)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from transformers import TrainerCallback

def gpu_stats() -> dict[str, float]:
    """Utilisation and memory of the current CUDA device; empty without one."""
    import torch

    if not torch.cuda.is_available():
        return {}
    stats = {
        "gpu_mem_gb": torch.cuda.memory_allocated() / 2**30,
        "gpu_mem_peak_gb": torch.cuda.max_memory_allocated() / 2**30,
    }
    try:
        stats["gpu_util_pct"] = float(torch.cuda.utilization())
    except Exception:  # noqa: BLE001,S110 - pynvml missing or no NVML on this driver: memory is still worth logging
        pass
    return stats


class MetricsCallback(TrainerCallback):
    """Turns each `on_log` into a flat record: loss, eval loss, lr, grad norm, tokens/s, GPU util/memory."""

    def __init__(self, on_log: Callable[[dict[str, Any]], None] | None = None):
        self.on_log_fn = on_log
        self.records: list[dict[str, Any]] = []
        self._t0 = time.perf_counter()
        self._last_t = self._t0
        self._last_tokens = 0

    def on_train_begin(self, args, state, control, **kwargs):
        self._t0 = self._last_t = time.perf_counter()
        self._last_tokens = state.num_input_tokens_seen or 0

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        now = time.perf_counter()
        tokens = state.num_input_tokens_seen or 0
        record: dict[str, Any] = {"step": state.global_step, "epoch": state.epoch, "wall_s": now - self._t0}
        for key in ("loss", "eval_loss", "learning_rate", "grad_norm"):
            if key in logs:
                record[key] = float(logs[key])
        if "loss" in logs and now > self._last_t:
            record["tokens_per_s"] = (tokens - self._last_tokens) / (now - self._last_t)
            self._last_t, self._last_tokens = now, tokens
        if not any(k in record for k in ("loss", "eval_loss")):
            return  # the end-of-training summary log carries no per-step metric
        record.update(gpu_stats())
        self.records.append(record)
        if self.on_log_fn is not None:
            self.on_log_fn(dict(record))
