"""Which eval rounds a reader sees, and their episodes with the labels a reader filters by.

Shared by the trajectory explorer and the notebook dataframes, so both show the rounds the report counts: the
newest finished round of each (run, round arm). A round arm is the arm, or `arm@suite` for a named eval suite;
rounds without a suite belong to the run's default eval suite (spec/suites.py DEFAULT_SUITE). Episodes are read as JSON dicts
(the store validated them on write) and streamed in task order, a chunk of tasks per connection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from env0_posttrain.tasks import reward as rewards
from env0_posttrain.store import Store
from env0_posttrain.spec.suites import split_round_arm

EVAL_ARMS = ("base", "sft", "teacher_eval", "rl", "onpolicy")


@dataclass(frozen=True)
class RoundRef:
    round_id: str
    run_id: str
    arm: str
    suite: str
    model: str
    status: str
    started_at: float


def select_rounds(store: Store, run_id: str | None = None, arms: Sequence[str] | None = EVAL_ARMS,
                  latest: bool = True) -> list[RoundRef]:
    """Rounds of one run (or every run): `arms` None = every arm (teacher training rollouts too); `latest`: only the
    newest finished round per (run, round arm), as the report reads them; else every round, finished or not."""
    refs = [RoundRef(rid, run, *split_round_arm(arm), model, status, started)
            for rid, run, arm, model, status, started in store.round_index(run_id)]
    refs = [r for r in refs if arms is None or r.arm in arms]
    if not latest:
        return refs
    newest: dict[tuple[str, str, str], RoundRef] = {}
    for r in refs:
        if r.status == "finished":
            newest[(r.run_id, r.arm, r.suite)] = r  # ordered by start: the last one wins
    return list(newest.values())


def iter_episodes(store: Store, rounds: Iterable[RoundRef], chunk: int = 200,
                  ) -> Iterator[tuple[RoundRef, dict[str, Any]]]:
    """(round, episode dict) in (task, round, trial) order: one task's episodes arrive together. Read `chunk` tasks
    per connection, so a reader of 24,000 episodes holds neither them all nor the store's lock for long."""
    by_id = {r.round_id: r for r in rounds}
    if not by_id:
        return
    task_ids = store.episode_task_ids(list(by_id))
    for i in range(0, len(task_ids), chunk):
        for round_id, blob in store.episode_json(list(by_id), task_ids[i:i + chunk]):
            yield by_id[round_id], json.loads(blob)


TaskKey = tuple[str, str | None, str]  # (run_id, suite or None for the run's tasks table, task_id)


def _task_row(split: str | None, blob: str) -> dict[str, Any]:
    task = json.loads(blob)
    return {"split": split, "family": task.get("family"), "template_id": task.get("template_id"),
            "difficulty": task.get("difficulty"), "instruction": task.get("instruction", "")}


def task_rows(store: Store, run_ids: Iterable[str]) -> dict[TaskKey, dict[str, Any]]:
    """What the store knows of each task: {split, family, template_id, difficulty, instruction}, from the run's
    tasks table and, for named eval suites, the suites' own task table (a suite may hold a training task)."""
    from env0_posttrain.store.suites import run_suite_tasks

    out: dict[TaskKey, dict[str, Any]] = {}
    for run_id in set(run_ids):
        for split, blob in store.load_tasks(run_id):
            out[(run_id, None, json.loads(blob)["id"])] = _task_row(split, blob)
        for suite, tid, blob in run_suite_tasks(store, run_id):
            out[(run_id, suite, tid)] = _task_row(None, blob)
    return out


def task_info(rows: dict[TaskKey, dict[str, Any]], run_id: str, suite: str, task_id: str) -> dict[str, Any]:
    return rows.get((run_id, suite, task_id)) or rows.get((run_id, None, task_id)) or {}


def run_identifiers(store: Store, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """run_id -> the spec's identifiers a comparison is labelled with (digest, teacher, student, task-set digest)."""
    out: dict[str, dict[str, Any]] = {}
    for run_id in set(run_ids):
        digest, spec = store.run_digest_and_spec(run_id) or (None, {})
        info = store.task_set_info(run_id) or {}
        out[run_id] = {"run_spec_digest": digest,
                       "teacher_model": (spec.get("teacher") or {}).get("model"),
                       "student_model": (spec.get("student") or {}).get("model"),
                       "task_set_digest": info.get("digest")}
    return out


def instruction_of(episode: dict[str, Any]) -> str:
    """The first user message: the instruction as the agent saw it (for tasks the tasks table does not hold)."""
    return next((m.get("content") or "" for m in episode.get("messages", []) if m.get("role") == "user"), "")


def is_unscored(episode: dict[str, Any]) -> bool:
    """As evaluate.metrics.is_unscored, on the stored dict."""
    return rewards.is_unscored(episode)
