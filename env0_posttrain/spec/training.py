"""Value types that several run-spec sections share: where local models run, where training curves go.

Kept apart from runspec.py so each section reads one line per field (util/devices.py and train/tracking/trackers.py act on them).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

Device = Literal["auto", "cpu", "cuda"]
DEVICE_DOC = ("where every local model of the run trains and runs: LoRA training, the sanity probe, the base / sft / rl "
              "eval arms, GRPO's policy; 'auto' = CUDA when torch sees a GPU, else CPU (bf16 on CUDA, fp32 on CPU)")
Tracker = Literal["tensorboard", "wandb", "mlflow", "trackio", "comet_ml", "clearml", "neptune", "dvclive", "swanlab",
                  "codecarbon", "azure_ml", "dagshub", "flyte", "kubeflow"]  # transformers' report_to names
REPORT_TO_DOC = ("training-curve trackers handed to the trainer's report_to; [] = none. TensorBoard (the default, "
                 "offline) writes its event files beside what was trained; the others read their own environment variables")


def trackers(what: str = "") -> Any:
    """A `report_to` field: TensorBoard by default."""
    return Field(default_factory=lambda: ["tensorboard"], description=what + REPORT_TO_DOC)
