"""LoRA SFT with TRL + PEFT and GRPO, and the tiny offline student.

The trainers, their rows and the adapter's card sit here; `gpu/` holds what a CUDA run checks and plans (kernels,
memory plan, layer checkpointing, patch scope), `probe/` the sanity probe, `tiny_student/` the locally built base
model (tokenizer, corpus, practice tools) and `tracking/` the curves, metrics and progress of a run.

    from env0_posttrain.train import ensure_tiny_student, TinyStudentConfig, train_lora, sanity_probe

Names are resolved lazily: importing the package must not pull in torch / transformers / trl for
callers that only need the model card or the serving name.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ensure_task_student": "tiny_student.corpus",
    "TrainResult": "lora_sft", "train_lora": "lora_sft", "last_checkpoint": "lora_sft",
    "MetricsCallback": "tracking.metrics", "plot_training_curves": "tracking.plots",
    "ProbeResult": "probe.chat_rows", "sanity_probe": "probe.chat_rows",
    "CardInfo": "publish", "PublishError": "publish", "adapter_revision": "publish", "adapter_serving_name": "publish",
    "push_adapter": "publish", "render_model_card": "publish",
    "RowError": "rows", "rows_to_dataset": "rows",
    "TinyStudentConfig": "tiny_student.build", "ensure_tiny_student": "tiny_student.build", "student_info": "tiny_student.build",
    "student_corpus": "tiny_student.corpus", "oracle_row": "tiny_student.corpus",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'env0_posttrain.train' has no attribute {name!r}")
    return getattr(importlib.import_module(f"env0_posttrain.train.{_EXPORTS[name]}"), name)
