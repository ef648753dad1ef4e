"""Episode metrics per arm, and per family / difficulty / split.

Strict pass is reward >= 1 (the seeds' definition). An unscored row (no verifier result, or an
infrastructure / verifier failure) counts as a fail in the pass rate and at the task's minimum reward in the mean
(tasks/reward.py), and is listed by key, so a reader can see whether a difference is a model effect or an
infrastructure one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate.statistics import ProportionEstimate, TaskTrials, proportion_estimate
from env0_posttrain.tasks import reward as rewards
from env0_posttrain.tasks.model import Task
from env0_posttrain.tasks.reward import UNSCORED_STOPS

EVAL_ARMS = ("base", "sft", "teacher_eval", "rl", "onpolicy")


class UnscoredRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    arm: str
    task_id: str
    trial: int
    reason: str


class ArmMetrics(BaseModel):
    """What one arm did on one slice of the eval."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arm: str
    n_rows: int
    n_tasks: int
    trials: int = Field(description="most trials of any task")
    pass_rate: ProportionEstimate
    rows_with_tool_calls: int
    unscored: list[UnscoredRow]
    mean_reward: float
    mean_steps: float = Field(description="assistant turns per episode")
    completion_rate: float = Field(description="episodes the agent ended itself (stop_condition agent_completed)")
    format_failure_rate: float = Field(description="agent errors (malformed calls, unknown tools) per assistant turn")
    rows_with_format_failure: int
    infra_errors: int
    error_kinds: dict[str, int] = Field(default_factory=dict, description="summed Episode.error_counts, by kind")

    @property
    def n_unscored(self) -> int:
        return len(self.unscored)


def is_unscored(ep: Episode) -> bool:
    return rewards.is_unscored(ep)


def n_steps(ep: Episode) -> int:
    return sum(1 for m in ep.messages if m.get("role") == "assistant")


def check_eval_episodes(episodes: Iterable[Episode], tasks_by_id: Mapping[str, Task]) -> list[Episode]:
    """Refuse training rollouts and episodes of unknown tasks, naming the row; refuse duplicate keys."""
    out, seen = [], set()
    for i, ep in enumerate(episodes):
        where = f"episode #{i} (run {ep.run_id}, arm {ep.arm}, task {ep.task_id}, trial {ep.trial})"
        if ep.arm not in EVAL_ARMS:
            raise ValueError(f"{where}: field 'arm' is {ep.arm!r}; an eval report takes only {EVAL_ARMS}")
        if ep.task_id not in tasks_by_id:
            raise ValueError(f"{where}: field 'task_id' names no task of the task set")
        if ep.key in seen:
            raise ValueError(f"{where}: duplicate (run_id, arm, task_id, trial)")
        seen.add(ep.key)
        out.append(ep)
    return out


def by_arm(episodes: Iterable[Episode]) -> dict[str, list[Episode]]:
    groups: dict[str, list[Episode]] = defaultdict(list)
    for ep in episodes:
        groups[ep.arm].append(ep)
    return {arm: groups[arm] for arm in EVAL_ARMS if arm in groups}


def task_trials(episodes: Iterable[Episode]) -> TaskTrials:
    """task id -> strict pass of each trial, in trial order."""
    out: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    for ep in episodes:
        out[ep.task_id].append((ep.trial, ep.passed))
    return {tid: [p for _, p in sorted(v)] for tid, v in out.items()}


def arm_metrics(arm: str, episodes: Sequence[Episode], alpha: float = 0.05) -> ArmMetrics:
    n = len(episodes)
    turns = sum(n_steps(e) for e in episodes)
    per_task: dict[str, int] = defaultdict(int)
    for e in episodes:
        per_task[e.task_id] += 1
    return ArmMetrics(
        arm=arm,
        n_rows=n,
        n_tasks=len(per_task),
        trials=max(per_task.values(), default=0),
        pass_rate=proportion_estimate(sum(e.passed for e in episodes), n, alpha),
        rows_with_tool_calls=sum(e.n_tool_calls > 0 for e in episodes),
        unscored=[
            UnscoredRow(arm=arm, task_id=e.task_id, trial=e.trial, reason=_unscored_reason(e))
            for e in sorted(episodes, key=lambda e: (e.task_id, e.trial)) if is_unscored(e)
        ],
        mean_reward=sum(e.reward for e in episodes) / n if n else float("nan"),
        mean_steps=turns / n if n else float("nan"),
        completion_rate=sum(e.stop_condition == "agent_completed" for e in episodes) / n if n else float("nan"),
        format_failure_rate=sum(e.agent_errors for e in episodes) / turns if turns else 0.0,
        rows_with_format_failure=sum(e.agent_errors > 0 for e in episodes),
        infra_errors=sum(e.infra_errors for e in episodes),
        error_kinds=dict(sorted(sum((Counter(e.error_counts) for e in episodes), Counter()).items())),
    )


def _unscored_reason(ep: Episode) -> str:
    reason = ep.stop_condition if ep.stop_condition in UNSCORED_STOPS else "no verifier result"
    return f"{reason}: {ep.error}" if ep.error else reason


def metrics_by(
    episodes: Sequence[Episode], key: Callable[[Episode], str], alpha: float = 0.05
) -> dict[str, dict[str, ArmMetrics]]:
    """slice label -> arm -> metrics; slices sorted by label, arms in EVAL_ARMS order."""
    slices: dict[str, list[Episode]] = defaultdict(list)
    for ep in episodes:
        slices[key(ep)].append(ep)
    return {
        label: {arm: arm_metrics(arm, eps, alpha) for arm, eps in by_arm(slices[label]).items()}
        for label in sorted(slices)
    }


def family_key(tasks_by_id: Mapping[str, Task]) -> Callable[[Episode], str]:
    return lambda ep: tasks_by_id[ep.task_id].family


def difficulty_key(tasks_by_id: Mapping[str, Task]) -> Callable[[Episode], str]:
    return lambda ep: f"{tasks_by_id[ep.task_id].difficulty} calls"


def split_key(splits: Mapping[str, str]) -> Callable[[Episode], str]:
    return lambda ep: splits.get(ep.task_id, "unlabelled")


def eval_splits(episodes: Sequence[Episode], splits: Mapping[str, str] | None) -> list[str]:
    """The split labels the eval tasks carry; a per-split table is worth printing only when there are 2+."""
    if not splits:
        return []
    return sorted({splits.get(ep.task_id, "unlabelled") for ep in episodes})
