"""LoRA SFT with TRL + PEFT, and the tiny offline student.

    from env0_posttrain.train import ensure_tiny_student, TinyStudentConfig, train_lora, sanity_probe

Names are resolved lazily: importing the package must not pull in torch / transformers / trl for
callers that only need the model card or the serving name.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ensure_task_student": "student_corpus",
    "TrainResult": "lora_sft", "train_lora": "lora_sft", "last_checkpoint": "lora_sft",
    "MetricsCallback": "metrics_callback", "plot_training_curves": "plots",
    "ProbeResult": "probe", "sanity_probe": "probe",
    "CardInfo": "publish", "PublishError": "publish", "adapter_revision": "publish", "adapter_serving_name": "publish",
    "push_adapter": "publish", "render_model_card": "publish",
    "RowError": "rows", "rows_to_dataset": "rows",
    "TinyStudentConfig": "tiny_student", "ensure_tiny_student": "tiny_student", "student_info": "tiny_student",
    "student_corpus": "student_corpus", "oracle_row": "student_corpus",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'env0_posttrain.train' has no attribute {name!r}")
    return getattr(importlib.import_module(f"env0_posttrain.train.{_EXPORTS[name]}"), name)
