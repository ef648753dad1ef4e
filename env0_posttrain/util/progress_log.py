"""Progress as log lines at a steady interval, so it reaches Dagster's event log (and the UI) and not only a
terminal's progress bar: base-model pre-training, LoRA and GRPO steps, every rollout round's episodes.

A line is written for the first unit done, then whenever `ENV0_PROGRESS_SECONDS` (default 30) have passed since
the last one, and for the last unit: `LoRA training: 120/300 steps (40%), loss 0.8123, 1m32s elapsed, ~2m18s
left`. Lines go to a logger under `env0_posttrain`, which Dagster captures for a step run in its process
(dagster.yaml: managed_python_loggers) and the Pipes worker forwards (stages/pipes_worker.py).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

PROGRESS_SECONDS_ENV = "ENV0_PROGRESS_SECONDS"
DEFAULT_SECONDS = 30.0


def progress_seconds() -> float:
    raw = os.environ.get(PROGRESS_SECONDS_ENV)
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_SECONDS
    except ValueError:
        return DEFAULT_SECONDS


def _duration(s: float) -> str:
    s = int(round(s))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s" if m else f"{sec}s"


def _value(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v)


class ProgressLog:
    """`update(done, **figures)` as work proceeds; writes a line when the interval has passed (see module doc)."""

    def __init__(self, what: str, total: int, unit: str, log: logging.Logger | None = None,
                 seconds: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.what, self.total, self.unit = what, total, unit
        self.log = log or logging.getLogger("env0_posttrain.progress")
        self.seconds = progress_seconds() if seconds is None else seconds
        self.clock = clock
        self.start = clock()
        self.last_at: float | None = None
        self.last_done = -1
        self.lines: list[str] = []  # what was written (tests, and the caller's own summary)

    def line(self, done: int, figures: Mapping[str, Any]) -> str:
        elapsed = self.clock() - self.start
        pct = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        shown = "".join(f", {k} {_value(v)}" for k, v in figures.items() if v is not None)
        left = f", ~{_duration(elapsed / done * (self.total - done))} left" if 0 < done < self.total else ""
        return f"{self.what}: {done}/{self.total} {self.unit}{pct}{shown}, {_duration(elapsed)} elapsed{left}"

    def update(self, done: int, **figures: Any) -> None:
        now = self.clock()
        due = self.last_at is None or now - self.last_at >= self.seconds or done >= self.total
        if due and done != self.last_done and done > 0:
            self._write(done, figures, now)

    def finish(self, done: int, **figures: Any) -> None:
        """The closing line, unless the last one already said as much."""
        if done != self.last_done:
            self._write(done, figures, self.clock())

    def _write(self, done: int, figures: Mapping[str, Any], now: float) -> None:
        text = self.line(done, figures)
        self.lines.append(text)
        self.log.info(text)
        self.last_at, self.last_done = now, done


class LoggedBar:
    """A tqdm bar for the terminal plus a ProgressLog for the event log, behind tqdm's update / set_postfix / close
    (what a rollout round calls: `update(1)` per episode, then `set_postfix` with the new counts)."""

    def __init__(self, total: int, desc: str, unit: str, log: logging.Logger, disable: bool = False):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc, unit=unit, disable=disable, leave=True)
        self.progress = None if disable else ProgressLog(desc, total, "episodes", log)
        self.done = 0
        self.figures: dict[str, Any] = {}
        self.pending = False

    def _flush(self) -> None:
        if self.pending and self.progress is not None:
            self.progress.update(self.done, **self.figures)
        self.pending = False

    def update(self, n: int = 1) -> None:
        self._flush()  # an episode that no set_postfix followed (crashed, failed on infra)
        self.bar.update(n)
        self.done += n
        self.pending = True

    def set_postfix(self, **figures: Any) -> None:
        self.figures = figures
        self.bar.set_postfix(figures)
        self._flush()  # the line carries the counts that include this episode

    def close(self) -> None:
        self._flush()
        self.bar.close()
        if self.progress is not None and self.done:
            self.progress.finish(self.done, **self.figures)
