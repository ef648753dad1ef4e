"""A training run's progress: one bar on the console with the latest loss, and the same figures as a log line at
a steady interval (util/progress_log.py), which Dagster's event log shows while the step runs.

With `disable_tqdm=True` transformers' Trainer prints every log as a Python dict (PrinterCallback);
with tqdm enabled its bar vanishes when done and the dicts still land under it. `LossProgress`
replaces both: one bar per run (steps done / max steps) whose postfix carries the last train and
eval loss, left on screen when training ends; its log lines carry the same figures plus `extra()`'s
(GRPO: the reward and the episodes played).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from tqdm.auto import tqdm
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback

from env0_posttrain.util.progress_log import ProgressLog

log = logging.getLogger("env0_posttrain.train")
SHOWN = (("loss", "loss"), ("eval_loss", "eval_loss"), ("train_loss", "mean_loss"), ("reward", "reward"))


class LossProgress(TrainerCallback):
    def __init__(self, desc: str, extra: Callable[[], dict[str, Any]] | None = None):
        self.desc = desc
        self.extra = extra or dict
        self.bar: Any = None
        self.progress: ProgressLog | None = None
        self.postfix: dict[str, str] = {}
        self.figures: dict[str, float] = {}

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.bar = tqdm(total=state.max_steps, desc=self.desc, unit="step", leave=True, dynamic_ncols=True)
            self.bar.update(state.global_step)  # a resumed run starts where its checkpoint was
            self.progress = ProgressLog(self.desc, state.max_steps, "steps", log)

    def on_step_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.update(state.global_step - self.bar.n)
        if self.progress is not None:
            self.progress.update(state.global_step, **self.figures, **self.extra())

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.bar is None or not logs:
            return
        for key, label in SHOWN:
            if isinstance(logs.get(key), (int, float)):
                self.postfix[label] = f"{logs[key]:.4f}"
                self.figures[label] = float(logs[key])
        self.bar.set_postfix(self.postfix, refresh=True)

    def on_train_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self.progress is not None:
            self.progress.finish(state.global_step, **self.figures, **self.extra())
            self.progress = None


def show_progress(trainer: Any, desc: str, extra: Callable[[], dict[str, Any]] | None = None) -> LossProgress:
    """Swap the trainer's dict printer / vanishing bar for a LossProgress bar (and its event-log lines)."""
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    progress = LossProgress(desc, extra)
    trainer.add_callback(progress)
    return progress
