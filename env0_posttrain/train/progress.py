"""A training run on the console: one progress bar with the latest loss, instead of raw log dicts.

With `disable_tqdm=True` transformers' Trainer prints every log as a Python dict (PrinterCallback);
with tqdm enabled its bar vanishes when done and the dicts still land under it. `LossProgress`
replaces both: one bar per run (steps done / max steps) whose postfix carries the last train and
eval loss, left on screen when training ends.
"""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback


class LossProgress(TrainerCallback):
    def __init__(self, desc: str):
        self.desc = desc
        self.bar: Any = None
        self.postfix: dict[str, str] = {}

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.bar = tqdm(total=state.max_steps, desc=self.desc, unit="step", leave=True, dynamic_ncols=True)
            self.bar.update(state.global_step)  # a resumed run starts where its checkpoint was

    def on_step_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.update(state.global_step - self.bar.n)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.bar is None or not logs:
            return
        for key, label in (("loss", "loss"), ("eval_loss", "eval_loss"), ("train_loss", "mean_loss")):
            if isinstance(logs.get(key), (int, float)):
                self.postfix[label] = f"{logs[key]:.4f}"
        self.bar.set_postfix(self.postfix, refresh=True)

    def on_train_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def show_progress(trainer: Any, desc: str) -> LossProgress:
    """Swap the trainer's dict printer / vanishing bar for a LossProgress bar."""
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    progress = LossProgress(desc)
    trainer.add_callback(progress)
    return progress
