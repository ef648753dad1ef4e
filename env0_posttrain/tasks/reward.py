"""What a reward is, for every path that reads one: a finite number in [-1, 1], or a verifier error naming the value.

Why one rule and not a clamp: `max(-1, min(1, r))` turns NaN (an empty check list's `0/0`) into 1.0, so a verifier
that averaged over nothing passed an agent that did nothing. A value that is not a finite number in range says the
verifier is broken, and a broken verifier's verdict is no verdict: the episode is unscored.

An unscored episode (its verifier crashed, timed out, wrote no reward or a bad one; or the harness failed around the
agent) is a fail in every pass rate and, to an optimiser, worth the task's minimum reward: never more than the worst
honest verdict, so a policy gains nothing by breaking its verifier. `optimiser_reward` is the one function an
optimiser (GRPO, on-policy distillation, an SFT reward floor) reads a reward through.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator

REWARD_MIN, REWARD_MAX = -1.0, 1.0
# stop conditions after which the episode has no verdict, whatever else it holds (agent/records.StopCondition)
UNSCORED_STOPS = frozenset({"infra_error", "verifier_error", "environment_error"})


class RewardError(ValueError):
    """A verifier's reward that is not a finite number in [-1, 1]: a verifier error, never clamped."""


def checked_reward(value: Any, where: str = "reward") -> float:
    """`value` as a float if it is a real number (not a bool, not a string), finite and within [-1, 1]; else
    RewardError naming `where` and the value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RewardError(f"{where}: {_shown(value)} is not a number ({type(value).__name__})")
    try:
        number = float(value)
    except OverflowError:  # an int beyond float's range
        raise RewardError(f"{where}: {_shown(value)} is not a finite number") from None
    if not math.isfinite(number):
        raise RewardError(f"{where}: {_shown(value)} is not a finite number")
    if not REWARD_MIN <= number <= REWARD_MAX:
        raise RewardError(f"{where}: {_shown(value)} is outside [{REWARD_MIN:g}, {REWARD_MAX:g}]")
    return number


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _validated(value: Any) -> float:
    return checked_reward(value)


# the pydantic field type of every stored reward (VerifierResult.reward, results.jsonl rows)
Reward = Annotated[float, BeforeValidator(_validated)]


def task_min_reward(task: Any = None) -> float:
    """The worst honest verdict a task can give. Every built-in template runs the standard safety gates
    (tasks/gates.py: a tripped gate is -1) and an env0 package's verifier may write any reward in [-1, 1], so for
    every task it is the bottom of the range. `task` is taken so a task with a narrower range can say so here."""
    return REWARD_MIN


def is_unscored(episode_or_row: Any) -> bool:
    """No verdict: no verifier result, or a stop that means the harness or the verifier failed. Takes an Episode
    (attributes) or a stored row (a mapping with `verifier`, or a results.jsonl row with `reward`)."""
    get = episode_or_row.get if isinstance(episode_or_row, Mapping) else \
        (lambda k, d=None: getattr(episode_or_row, k, d))
    if get("stop_condition") in UNSCORED_STOPS:
        return True
    if isinstance(episode_or_row, Mapping) and "verifier" not in episode_or_row:
        return episode_or_row.get("reward") is None  # a results.jsonl row: its reward is the verdict
    return get("verifier") is None


def optimiser_reward(episode_or_row: Any, task: Any = None) -> float:
    """The reward an optimiser sees for one episode: the verifier's, checked; an unscored episode's is
    `task_min_reward(task)`. A stored reward that fails the check raises RewardError (a corrupt store is no verdict
    to train on)."""
    if is_unscored(episode_or_row):
        return task_min_reward(task)
    if isinstance(episode_or_row, Mapping):
        verifier = episode_or_row.get("verifier", episode_or_row)
    else:
        verifier = episode_or_row.verifier
    value = verifier.get("reward") if isinstance(verifier, Mapping) else getattr(verifier, "reward", None)
    return checked_reward(value, "stored reward")
