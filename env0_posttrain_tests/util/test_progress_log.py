"""Progress at a steady interval, as log lines Dagster's event log shows: the first unit, then one line per interval
(on a clock the test drives, so nothing depends on the machine's speed), and the last; a rollout round's counts
include the episode just handed over; a training run's lines carry the loss."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from env0_posttrain.util.progress_log import LoggedBar, ProgressLog


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_line_for_the_first_unit_then_one_per_interval_and_the_last():
    clock = Clock()
    progress = ProgressLog("LoRA training", 10, "steps", seconds=30.0, clock=clock)
    for step in range(1, 11):
        clock.now += 7.0  # a step every 7 s: lines at 7 s, then once 30 s have passed since the last, and the end
        progress.update(step, loss=1.0 / step)
    assert [line.split(",")[0] for line in progress.lines] == [
        "LoRA training: 1/10 steps (10%)", "LoRA training: 6/10 steps (60%)", "LoRA training: 10/10 steps (100%)"]
    assert progress.lines[1] == "LoRA training: 6/10 steps (60%), loss 0.1667, 42s elapsed, ~28s left"
    progress.finish(10, loss=0.1)
    assert len(progress.lines) == 3  # the last line already said it


def test_lines_reach_the_env0_posttrain_logger(caplog):
    with caplog.at_level(logging.INFO, logger="env0_posttrain"):
        ProgressLog("GRPO", 2, "steps", seconds=0.0).update(1, reward=0.25, episodes=16)
    assert [r.name for r in caplog.records] == ["env0_posttrain.progress"]
    assert caplog.records[0].getMessage().startswith("GRPO: 1/2 steps (50%), reward 0.2500, episodes 16, 0s elapsed")


def test_a_rollout_rounds_line_counts_the_episode_just_delivered(caplog, monkeypatch):
    monkeypatch.setenv("ENV0_PROGRESS_SECONDS", "0")
    log = logging.getLogger("env0_posttrain.agent")
    with caplog.at_level(logging.INFO, logger="env0_posttrain"):
        bar = LoggedBar(3, "teacher env0-oracle/oracle", "ep", log)
        bar.update(1)
        bar.set_postfix(passed=1, refills=0)  # as run_rollouts does: update, then the new counts
        bar.update(1)  # a crashed episode: no counts follow
        bar.update(1)
        bar.set_postfix(passed=2, refills=1)
        bar.close()
    lines = [r.getMessage().split(", 0s")[0] for r in caplog.records]
    assert lines == ["teacher env0-oracle/oracle: 1/3 episodes (33%), passed 1, refills 0",
                     "teacher env0-oracle/oracle: 2/3 episodes (67%), passed 1, refills 0",
                     "teacher env0-oracle/oracle: 3/3 episodes (100%), passed 2, refills 1"]


def test_no_lines_when_the_caller_turned_progress_off(caplog):
    with caplog.at_level(logging.INFO, logger="env0_posttrain"):
        bar = LoggedBar(2, "base", "ep", logging.getLogger("env0_posttrain.agent"), disable=True)
        bar.update(1)
        bar.set_postfix(passed=0)
        bar.close()
    assert caplog.records == []


def test_a_training_runs_lines_carry_its_loss(caplog, monkeypatch):
    from env0_posttrain.train.tracking.progress import LossProgress

    monkeypatch.setenv("ENV0_PROGRESS_SECONDS", "0")
    cb = LossProgress("base student (qwen3) pre-training")
    state = SimpleNamespace(is_world_process_zero=True, max_steps=2, global_step=0)
    with caplog.at_level(logging.INFO, logger="env0_posttrain"):
        cb.on_train_begin(None, state, None)
        state.global_step = 1
        cb.on_log(None, state, None, logs={"loss": 2.5})
        cb.on_step_end(None, state, None)
        state.global_step = 2
        cb.on_step_end(None, state, None)
        cb.on_log(None, state, None, logs={"train_loss": 2.0})
        cb.on_train_end(None, state, None)
    lines = [r.getMessage().split(", 0s")[0] for r in caplog.records]
    assert lines == ["base student (qwen3) pre-training: 1/2 steps (50%), loss 2.5000",
                     "base student (qwen3) pre-training: 2/2 steps (100%), loss 2.5000"]
