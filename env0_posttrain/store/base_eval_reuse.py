"""Teacher backfills reuse the base eval: a teacher cannot change the base student's result.

The base arm's result is a function of the student (its weights or served name), the eval tasks,
the trials, the sampling and the harness budget, plus the harness code that runs it. Those values
are hashed into a key, read from what the eval actually uses: the endpoint `arm_endpoint` built and
the settings `rollout_settings` returned (whatever run-spec fields feed them). A finished, complete
and fully scored base round of *another* run with the same key is copied into this run as a new
finished round (episodes re-labelled with this run's id, the source named in the round's summary),
so N teacher clones of a run cost one base eval. Rounds of the same run are never reused: asking
for this run's base eval again (a nightly eval) means running it again.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from env0_posttrain.agent import AgentSettings, ModelEndpoint
from env0_posttrain.store import Store
from env0_posttrain.util.digests import digest, sha256_hex

REUSE_SCHEMA = """
CREATE TABLE IF NOT EXISTS eval_reuse_keys (
  round_id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, arm VARCHAR NOT NULL, reuse_key VARCHAR NOT NULL,
  reused_from_round VARCHAR, created_at DOUBLE NOT NULL);
"""
REUSED_ARMS = ("base",)
# Settings that change how failures are retried or how fast episodes run, never what a healthy episode does.
NOT_IN_KEY = {"concurrency", "processes", "scale", "request_timeout_s", "max_retries", "backoff_base_s", "backoff_max_s",
              "max_refills"}

Rollout = Callable[[], tuple[str, list, dict]]


def base_eval_key(student: str, endpoint: ModelEndpoint, settings: AgentSettings, tasks: list, trials: int,
                  code: str) -> str:
    """Hash of everything that determines the base arm's result (the model's own id is excluded: the local
    student is registered under a per-run name; `student` identifies its weights or served name)."""
    parts = {
        "student": student,
        "sampling": endpoint.model_dump(mode="json", exclude={"model", "api_key_env"}),
        "harness": settings.model_dump(mode="json", exclude=NOT_IN_KEY),
        "tasks": sorted((t.id, sha256_hex(t.model_dump_json())) for t in tasks),
        "trials": trials,
        "code": code,
    }
    return digest(parts, 24)


def _ensure_table(store: Store) -> None:
    with store.transaction() as con:
        con.execute(REUSE_SCHEMA)


def find_reusable(store: Store, key: str, run_id: str, arm: str, planned: int) -> tuple[str, str] | None:
    """(round_id, run_id) of the newest finished, complete, fully scored round of another run with `key` that
    ran its episodes itself (a copy points at its source, so the report names the run that ran them)."""
    _ensure_table(store)
    rows = store.query(
        "SELECT r.round_id, r.run_id FROM eval_reuse_keys k JOIN rounds r USING (round_id) "
        "WHERE k.reuse_key = ? AND k.arm = ? AND k.reused_from_round IS NULL AND r.run_id <> ? "
        "AND r.status = 'finished' AND r.n_expected = ? "
        "AND (SELECT count(*) FROM episodes e WHERE e.round_id = r.round_id) = r.n_expected "
        "AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.round_id = r.round_id "
        "  AND e.stop_condition IN ('infra_error', 'verifier_error', 'environment_error')) "
        "ORDER BY r.finished_at DESC LIMIT 1",
        [key, arm, run_id, planned],
    )
    return (rows[0][0], rows[0][1]) if rows else None


def remember(store: Store, round_id: str, run_id: str, arm: str, key: str, reused_from: str | None = None) -> None:
    _ensure_table(store)
    with store.transaction() as con:
        con.execute("INSERT INTO eval_reuse_keys VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (round_id) DO NOTHING",
                    [round_id, run_id, arm, key, reused_from, time.time()])


def copy_round(store: Store, source_round: str, source_run: str, run_id: str, arm: str,
               key: str) -> tuple[str, list, dict]:
    """The source round's episodes as a new finished round of `run_id`, in one transaction."""
    src = store.query("SELECT model, n_expected, summary_json FROM rounds WHERE round_id = ?", [source_round])[0]
    model, n_expected, summary_json = src
    summary = json.loads(summary_json or "{}") | {"reused_from": {"run_id": source_run, "round_id": source_round}}
    summary["run_id"] = run_id
    episodes = [e.model_copy(update={"run_id": run_id}) for e in store.load_episodes(source_round)]
    round_id = f"{run_id}.{arm}.{time.strftime('%Y%m%dT%H%M%S')}.{uuid.uuid4().hex[:6]}"
    now = time.time()
    _ensure_table(store)
    with store.transaction() as con:
        con.execute("INSERT INTO rounds VALUES (?, ?, ?, ?, ?, 'finished', ?, ?, ?)",
                    [round_id, run_id, arm, model, n_expected, now, now, json.dumps(summary)])
        con.executemany(
            "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [[round_id, run_id, e.arm, e.task_id, e.trial, e.model, e.reward, e.passed, e.stop_condition,
              e.n_tool_calls, e.duration_s, e.model_dump_json(), now] for e in episodes],
        )
        con.execute("INSERT INTO eval_reuse_keys VALUES (?, ?, ?, ?, ?, ?)",
                    [round_id, run_id, arm, key, source_round, now])
    return round_id, episodes, summary


def rollout_or_reuse(store: Store, run_id: str, arm: str, student: Callable[[], str | Path], endpoint: ModelEndpoint,
                     settings: AgentSettings, tasks: list, trials: int, code: str,
                     rollout: Rollout) -> tuple[str, list, dict]:
    """Reuse another run's equivalent base round if there is one, else run `rollout` and remember its key.
    `student()` names the base weights; it is asked only for the reused arms."""
    if arm.partition("@")[0] not in REUSED_ARMS:  # an eval suite's round is `arm@suite`
        return rollout()
    key = base_eval_key(store.paths.rel(student()), endpoint, settings, tasks, trials, code)  # a moved data dir keeps its keys
    found = find_reusable(store, key, run_id, arm, len(tasks) * trials)
    if found is not None:
        return copy_round(store, found[0], found[1], run_id, arm, key)
    round_id, episodes, summary = rollout()
    remember(store, round_id, run_id, arm, key)
    return round_id, episodes, summary


def reused_from(store: Store, round_id: str | None) -> dict[str, Any] | None:
    """{'run_id', 'round_id'} of the round `round_id` was copied from, None if it ran itself."""
    if not round_id:
        return None
    rows = store.query("SELECT summary_json FROM rounds WHERE round_id = ?", [round_id])
    if not rows or not rows[0][0]:
        return None
    return json.loads(rows[0][0]).get("reused_from")
