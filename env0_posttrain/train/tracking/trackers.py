"""Where training curves go: the experiment trackers transformers' Trainer reports to (`report_to`).

LoRA SFT, GRPO and the tiny student's base pre-training each take a `report_to` list from the run spec and hand
it to the trainer (TRL's SFTTrainer / GRPOTrainer, transformers' Trainer). The default is TensorBoard, which
needs no account or network: its event files are written beside what the training produced (the adapter's
artifact folder, or the tiny student's folder), and the asset's metadata names that folder
(`tensorboard --logdir <folder>`). Other trackers (wandb, mlflow, trackio, ...) are configured by their own
environment variables (e.g. WANDB_MODE=offline, MLFLOW_TRACKING_URI) and must be installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

TENSORBOARD_DIRNAME = "tensorboard"


def report_to_list(names: Sequence[str]) -> list[str]:
    """What the trainer's `report_to` gets: the spec's names, in order, without repeats ([] = none)."""
    return list(dict.fromkeys(names))


def route_tensorboard(trainer: Any, log_dir: Path) -> Path | None:
    """Point the trainer's TensorBoard callback at `log_dir` (transformers' default is output_dir/runs/<time>_<host>,
    inside the checkpoints); None when the trainer does not report to TensorBoard."""
    from transformers.integrations import TensorBoardCallback

    found = [cb for cb in trainer.callback_handler.callbacks if isinstance(cb, TensorBoardCallback)]
    for cb in found:
        cb.logging_dir = str(log_dir)
    return log_dir if found else None


def event_files(log_dir: Path | None) -> list[Path]:
    return sorted(Path(log_dir).rglob("events.out.tfevents.*")) if log_dir and Path(log_dir).is_dir() else []
