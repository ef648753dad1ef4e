"""DuckDB store of record: every tabular artifact of every run, keyed by run_id.

DuckDB allows one writer per file across processes, so connections are short. DuckDB reads the
file's headers before it takes its own lock, so a process opening the file while another has it
open can work from the old headers once it gets the lock, and the other's last commit is lost
(reproduced in env0_posttrain_tests/store/test_open_race.py). Every connection therefore holds a
sidecar file lock (`<db>.lock`, filelock) from before connect until after close. Rollouts write one
episode per transaction as it finishes: a killed process loses nothing it had finished.

Evaluations are kept as *rounds*: each materialization of a rollout asset opens a round (or resumes the
newest unfinished one), so nightly evals accumulate history instead of overwriting it. Paths into the data
dir (an adapter, a report, the base named in a training result) are stored relative to the store file's
directory, the data root, and resolved on read: a copied data dir works where it lands.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential
from filelock import FileLock

from env0_posttrain.agent.records import Episode
from env0_posttrain.spec.runspec import RunSpec
from env0_posttrain.util.paths import Paths
from env0_posttrain.store.read_lock import shared_file_lock
from env0_posttrain.util.processes import process_alive, this_host

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  run_id VARCHAR PRIMARY KEY, spec_json VARCHAR NOT NULL, digest VARCHAR NOT NULL,
  created_at DOUBLE NOT NULL, updated_at DOUBLE NOT NULL);
CREATE TABLE IF NOT EXISTS task_sets (
  run_id VARCHAR PRIMARY KEY, digest VARCHAR NOT NULL, provenance_json VARCHAR NOT NULL,
  ledger_json VARCHAR NOT NULL, created_at DOUBLE NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
  run_id VARCHAR NOT NULL, task_id VARCHAR NOT NULL, split VARCHAR NOT NULL, family VARCHAR NOT NULL,
  template_id VARCHAR NOT NULL, difficulty INTEGER NOT NULL, digest VARCHAR NOT NULL, task_json VARCHAR NOT NULL,
  PRIMARY KEY (run_id, task_id));
CREATE TABLE IF NOT EXISTS rounds (
  round_id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, arm VARCHAR NOT NULL, model VARCHAR NOT NULL,
  n_expected INTEGER NOT NULL, status VARCHAR NOT NULL, started_at DOUBLE NOT NULL, finished_at DOUBLE,
  summary_json VARCHAR);
CREATE TABLE IF NOT EXISTS episodes (
  round_id VARCHAR NOT NULL, run_id VARCHAR NOT NULL, arm VARCHAR NOT NULL, task_id VARCHAR NOT NULL,
  trial INTEGER NOT NULL, model VARCHAR NOT NULL, reward DOUBLE NOT NULL, passed BOOLEAN NOT NULL,
  stop_condition VARCHAR NOT NULL, n_tool_calls INTEGER NOT NULL, duration_s DOUBLE NOT NULL,
  episode_json VARCHAR NOT NULL, written_at DOUBLE NOT NULL, PRIMARY KEY (round_id, task_id, trial));
CREATE TABLE IF NOT EXISTS sft_rows (
  run_id VARCHAR NOT NULL, row_idx INTEGER NOT NULL, task_id VARCHAR NOT NULL, source_round VARCHAR,
  reward DOUBLE, row_json VARCHAR NOT NULL, PRIMARY KEY (run_id, row_idx));
CREATE TABLE IF NOT EXISTS training_runs (
  train_id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, status VARCHAR NOT NULL, started_at DOUBLE NOT NULL,
  finished_at DOUBLE, adapter_path VARCHAR, revision VARCHAR, result_json VARCHAR);
ALTER TABLE training_runs ADD COLUMN IF NOT EXISTS pid INTEGER; ALTER TABLE training_runs ADD COLUMN IF NOT EXISTS host VARCHAR;
CREATE TABLE IF NOT EXISTS training_metrics (
  train_id VARCHAR NOT NULL, run_id VARCHAR NOT NULL, step INTEGER NOT NULL, loss DOUBLE, eval_loss DOUBLE,
  learning_rate DOUBLE, grad_norm DOUBLE, tokens_per_s DOUBLE, gpu_util DOUBLE, gpu_mem_gb DOUBLE,
  metrics_json VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS eval_results (
  round_id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, arm VARCHAR NOT NULL, model VARCHAR NOT NULL,
  n INTEGER NOT NULL, passes INTEGER NOT NULL, pass_rate DOUBLE NOT NULL, created_at DOUBLE NOT NULL,
  summary_json VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS reports (
  report_id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, created_at DOUBLE NOT NULL, headline VARCHAR NOT NULL,
  markdown VARCHAR NOT NULL, report_dir VARCHAR NOT NULL, numbers_json VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS base_models (
  run_id VARCHAR PRIMARY KEY, student_digest VARCHAR NOT NULL, source VARCHAR NOT NULL, path VARCHAR NOT NULL,
  revision VARCHAR, recorded_at DOUBLE NOT NULL, info_json VARCHAR NOT NULL);
"""


def _locked(err: BaseException) -> bool:
    return isinstance(err, duckdb.IOException) and "lock" in str(err).lower()


def _empty_database() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute(SCHEMA)
    return con


PATH_KEYS = ("adapter_dir", "base_path", "tensorboard_dir")  # the paths a training result names (TrainResult, RLResult)


def _paths_in(result: dict, convert: Callable[[str], Any]) -> dict:
    return {k: str(convert(v)) if k in PATH_KEYS and isinstance(v, str) and v else v for k, v in result.items()}


TRAINING_METRIC_COLUMNS = ("loss", "eval_loss", "learning_rate", "grad_norm", "tokens_per_s", "gpu_util", "gpu_mem_gb")


class Store:
    """Short-lived connections to one DuckDB file; every public method is one transaction."""

    def __init__(self, db_path: Path | str, lock_timeout_s: float = 120.0, read_only: bool = False):
        """`read_only`: a reader that writes nothing, not even the lock file or the schema, so it works in a data
        dir it may not write (a read-only mount, another user's runs); a missing database reads as empty."""
        self.db_path = Path(db_path)
        self.lock_timeout_s = lock_timeout_s
        self.read_only = read_only
        self.paths = Paths(self.db_path.parent.resolve())  # the data root: Paths.db is <root>/env0.duckdb
        # One lock object per path in a process: reentrant in a thread (a nested connection shares
        # DuckDB's cached instance), exclusive between threads (each has its own descriptor) and processes.
        self._file_lock = FileLock(f"{self.db_path}.lock", is_singleton=True)
        if read_only:
            return
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as con:
            con.execute(SCHEMA)

    @contextmanager
    def _connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """Readers take the sidecar lock too: headers read during a writer's checkpoint are stale. Inside it, a
        process outside the store (a duckdb shell) holding DuckDB's own lock is waited for (20 ms doubling to
        1 s, jittered), up to lock_timeout_s."""
        if self.read_only:
            if not read_only:
                raise PermissionError(f"{self.db_path}: this store was opened read-only")
            with shared_file_lock(Path(f"{self.db_path}.lock"), self.lock_timeout_s):
                con = duckdb.connect(str(self.db_path), read_only=True) if self.db_path.exists() \
                    else _empty_database()
                try:
                    yield con
                finally:
                    con.close()
            return
        with self._file_lock.acquire(timeout=self.lock_timeout_s):
            retrying = Retrying(stop=stop_after_delay(self.lock_timeout_s),
                                wait=wait_random_exponential(multiplier=0.02, max=1.0),
                                retry=retry_if_exception(_locked), reraise=True)
            con = retrying(duckdb.connect, str(self.db_path), read_only=read_only and self.db_path.exists())
            try:
                yield con
            finally:
                con.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._connect(read_only=True) as con:
            return con.execute(sql, list(params)).fetchall()

    # runs ---------------------------------------------------------------------------------
    def upsert_run(self, spec: RunSpec) -> None:
        now = time.time()
        with self.transaction() as con:
            con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET "
                "spec_json = excluded.spec_json, digest = excluded.digest, updated_at = excluded.updated_at",
                [spec.run_id, spec.model_dump_json(), spec.digest(), now, now],
            )

    def run_digest_and_spec(self, run_id: str) -> tuple[str, dict] | None:
        """(spec digest, the spec as stored, unvalidated: readers of old runs label them with it)."""
        rows = self.query("SELECT digest, spec_json FROM runs WHERE run_id = ?", [run_id])
        return (rows[0][0], json.loads(rows[0][1])) if rows else None

    def clone_run_ids(self, run_id: str) -> list[str]:
        """The run's backfill clones (`<run_id>--...`), by id."""
        rows = self.query("SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id", [f"{run_id}--"])
        return [r[0] for r in rows]

    def built_counts(self, run_id: str) -> dict[str, int]:
        """How much the run has built: its task sets, rounds and training runs."""
        return {table: self.query(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id])[0][0]
                for table in ("task_sets", "rounds", "training_runs")}

    def get_run(self, run_id: str) -> RunSpec | None:
        rows = self.query("SELECT spec_json FROM runs WHERE run_id = ?", [run_id])
        return RunSpec.model_validate_json(rows[0][0]) if rows else None

    # tasks --------------------------------------------------------------------------------
    def replace_task_set(self, run_id: str, digest: str, provenance: dict, ledger: list[dict], tasks: list[tuple[str, Any]]) -> None:
        """tasks: (split, Task). Replaced whole, in one transaction."""
        with self.transaction() as con:
            con.execute("DELETE FROM tasks WHERE run_id = ?", [run_id])
            con.execute("DELETE FROM task_sets WHERE run_id = ?", [run_id])
            con.execute(
                "INSERT INTO task_sets VALUES (?, ?, ?, ?, ?)",
                [run_id, digest, json.dumps(provenance), json.dumps(ledger), time.time()],
            )
            con.executemany(
                "INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    [run_id, t.id, split, t.family, t.template_id, t.difficulty, t.content_digest(), t.model_dump_json()]
                    for split, t in tasks
                ],
            )

    def load_tasks(self, run_id: str, split: str | None = None) -> list[tuple[str, str]]:
        """(split, task_json) rows in a stable order."""
        sql = "SELECT split, task_json FROM tasks WHERE run_id = ?"
        params: list[Any] = [run_id]
        if split is not None:
            sql += " AND split = ?"
            params.append(split)
        return self.query(sql + " ORDER BY task_id", params)

    def task_splits(self, run_id: str) -> dict[str, str]:
        return dict(self.query("SELECT task_id, split FROM tasks WHERE run_id = ?", [run_id]))

    def task_set_info(self, run_id: str) -> dict | None:
        rows = self.query("SELECT digest, provenance_json, ledger_json FROM task_sets WHERE run_id = ?", [run_id])
        if not rows:
            return None
        return {"digest": rows[0][0], "provenance": json.loads(rows[0][1]), "ledger": json.loads(rows[0][2])}

    # rounds and episodes ------------------------------------------------------------------
    def open_round(self, run_id: str, arm: str, model: str, n_expected: int) -> str:
        """Resume the newest unfinished round for (run, arm, model, size), else start a new one."""
        rows = self.query("SELECT round_id FROM rounds WHERE run_id = ? AND arm = ? AND model = ? AND n_expected = ? "
                          "AND status = 'running' ORDER BY started_at DESC LIMIT 1", [run_id, arm, model, n_expected])
        if rows:
            return rows[0][0]
        round_id = f"{run_id}.{arm}.{time.strftime('%Y%m%dT%H%M%S')}.{uuid.uuid4().hex[:6]}"
        with self.transaction() as con:
            con.execute("INSERT INTO rounds VALUES (?, ?, ?, ?, ?, 'running', ?, NULL, NULL)",
                        [round_id, run_id, arm, model, n_expected, time.time()])
        return round_id

    def reopen_round(self, round_id: str) -> None:
        """A finished round resumed like one that never finished (to fill the episodes it lacks)."""
        with self.transaction() as con:
            con.execute("UPDATE rounds SET status = 'running', finished_at = NULL WHERE round_id = ?", [round_id])

    def finished_rounds(self, run_id: str, arm: str, model: str, n_expected: int,
                        finished_after: float = 0.0) -> list[tuple[str, dict]]:
        """(round_id, summary) of the finished rounds of (run, arm, model) planned at `n_expected` episodes and
        finished at or after `finished_after`, newest first."""
        rows = self.query("SELECT round_id, summary_json FROM rounds WHERE run_id = ? AND arm = ? AND model = ? "
                          "AND n_expected = ? AND status = 'finished' AND finished_at >= ? ORDER BY finished_at DESC",
                          [run_id, arm, model, n_expected, finished_after])
        return [(r, json.loads(s or "{}")) for r, s in rows]

    def round_index(self, run_id: str | None = None) -> list[tuple[str, str, str, str, str, float]]:
        """(round_id, run_id, arm, model, status, started_at) of every round (of one run), oldest first."""
        sql, params = "SELECT round_id, run_id, arm, model, status, started_at FROM rounds", []
        if run_id is not None:
            sql, params = sql + " WHERE run_id = ?", [run_id]
        return self.query(sql + " ORDER BY started_at", params)

    def finish_round(self, round_id: str, summary: dict) -> None:
        with self.transaction() as con:
            con.execute(
                "UPDATE rounds SET status = 'finished', finished_at = ?, summary_json = ? WHERE round_id = ?",
                [time.time(), json.dumps(summary), round_id],
            )

    def latest_round(self, run_id: str, arm: str, finished: bool = True) -> str | None:
        status = "AND status = 'finished'" if finished else ""
        rows = self.query(
            f"SELECT round_id FROM rounds WHERE run_id = ? AND arm = ? {status} ORDER BY started_at DESC LIMIT 1",
            [run_id, arm],
        )
        return rows[0][0] if rows else None

    def rounds(self, run_id: str, arm: str | None = None) -> list[dict]:
        sql = "SELECT round_id, arm, model, status, started_at, finished_at, summary_json FROM rounds WHERE run_id = ?"
        params: list[Any] = [run_id]
        if arm:
            sql += " AND arm = ?"
            params.append(arm)
        cols = ("round_id", "arm", "model", "status", "started_at", "finished_at", "summary_json")
        return [dict(zip(cols, r)) for r in self.query(sql + " ORDER BY started_at", params)]

    def write_episode(self, round_id: str, ep: Episode) -> None:
        self.write_episodes(round_id, [ep])

    def write_episodes(self, round_id: str, episodes: Sequence[Episode]) -> None:
        """One transaction for the lot: opening and closing the file costs tens of ms, a row almost nothing."""
        if not episodes:
            return
        now = time.time()
        with self.transaction() as con:
            con.executemany(
                "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (round_id, task_id, trial) DO NOTHING",
                [[round_id, ep.run_id, ep.arm, ep.task_id, ep.trial, ep.model, ep.reward, ep.passed,
                  ep.stop_condition, ep.n_tool_calls, ep.duration_s, ep.model_dump_json(), now] for ep in episodes],
            )

    def done_keys(self, round_id: str) -> set[tuple[str, int]]:
        return {(t, k) for t, k in self.query("SELECT task_id, trial FROM episodes WHERE round_id = ?", [round_id])}

    def load_episodes(self, round_id: str) -> list[Episode]:
        rows = self.query("SELECT episode_json FROM episodes WHERE round_id = ? ORDER BY task_id, trial", [round_id])
        return [Episode.model_validate_json(r[0]) for r in rows]

    def episode_task_ids(self, round_ids: Sequence[str]) -> list[str]:
        """The task ids the rounds hold episodes of, sorted."""
        marks = ", ".join("?" for _ in round_ids)
        return [t for (t,) in self.query(f"SELECT DISTINCT task_id FROM episodes WHERE round_id IN ({marks}) "
                                         "ORDER BY task_id", list(round_ids))]

    def episode_json(self, round_ids: Sequence[str], task_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(round_id, episode JSON) of these rounds' episodes of these tasks, in (task, round, trial) order."""
        rounds, tasks = ", ".join("?" for _ in round_ids), ", ".join("?" for _ in task_ids)
        return self.query(f"SELECT round_id, episode_json FROM episodes WHERE round_id IN ({rounds}) AND task_id IN "
                          f"({tasks}) ORDER BY task_id, round_id, trial", [*round_ids, *task_ids])

    def count_episodes(self, run_id: str, arm: str | None = None) -> int:
        sql, params = "SELECT count(*) FROM episodes WHERE run_id = ?", [run_id]
        if arm:
            sql += " AND arm = ?"
            params.append(arm)
        return self.query(sql, params)[0][0]

    # sft rows -----------------------------------------------------------------------------
    def replace_sft_rows(self, run_id: str, rows: list[tuple[str, float | None, dict]], source_round: str | None) -> None:
        """rows: (task_id, reward, training row); the run's previous rows are replaced in one transaction."""
        with self.transaction() as con:
            con.execute("DELETE FROM sft_rows WHERE run_id = ?", [run_id])
            con.executemany(
                "INSERT INTO sft_rows VALUES (?, ?, ?, ?, ?, ?)",
                [[run_id, i, t, source_round, r, json.dumps(row)] for i, (t, r, row) in enumerate(rows)],
            )

    def load_sft_rows(self, run_id: str) -> list[dict]:
        return [json.loads(r[0]) for r in self.query("SELECT row_json FROM sft_rows WHERE run_id = ? ORDER BY row_idx", [run_id])]

    # training -----------------------------------------------------------------------------
    def start_training(self, run_id: str) -> str:
        """A training by this process: one a dead process left `running` is failed first, a live one refuses."""
        if live := [(t, pid) for t, pid, alive in self.running_trainings(run_id) if alive]:
            raise RuntimeError(f"run {run_id}: training {live[0][0]} is still running in process {live[0][1]}; "
                               "wait for it to end or stop that process before training again")
        train_id = f"{run_id}.train.{time.strftime('%Y%m%dT%H%M%S')}.{uuid.uuid4().hex[:6]}"
        with self.transaction() as con:
            con.execute("INSERT INTO training_runs (train_id, run_id, status, started_at, pid, host) "
                        "VALUES (?, ?, 'running', ?, ?, ?)", [train_id, run_id, time.time(), os.getpid(), this_host()])
        return train_id

    def running_trainings(self, run_id: str | None = None) -> list[tuple[str, int, bool]]:
        """(train_id, pid, alive) of this machine's `running` trainings; the dead (or this process's) failed."""
        rows = self.query("SELECT train_id, pid, started_at FROM training_runs WHERE status = 'running' AND host = ?"
                          + (" AND run_id = ?" if run_id else "") + " ORDER BY started_at",
                          [this_host(), *([run_id] if run_id else [])])
        out = [(t, pid, pid != os.getpid() and process_alive(pid, started)) for t, pid, started in rows]
        for t, pid, _ in (row for row in out if not row[2]):
            self.finish_training(t, "failed", None, None, {"error": f"its process {pid} ended (killed?)"})
        return out

    def training_statuses(self, run_id: str) -> dict[str, str]:
        """train_id -> status (running, finished, failed) of every training of the run."""
        return dict(self.query("SELECT train_id, status FROM training_runs WHERE run_id = ?", [run_id]))

    def log_training_metrics(self, train_id: str, run_id: str, step: int, metrics: dict) -> None:
        values = [metrics.get(c) for c in TRAINING_METRIC_COLUMNS]
        with self.transaction() as con:
            con.execute(
                "INSERT INTO training_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [train_id, run_id, step, *values, json.dumps(metrics, default=str)],
            )

    def finish_training(self, train_id: str, status: str, adapter_path: str | None, revision: str | None, result: dict) -> None:
        with self.transaction() as con:
            con.execute(
                "UPDATE training_runs SET status = ?, finished_at = ?, adapter_path = ?, revision = ?, result_json = ? "
                "WHERE train_id = ?",
                [status, time.time(), self.paths.rel(adapter_path) if adapter_path else None, revision,
                 json.dumps(_paths_in(result, self.paths.rel), default=str), train_id],
            )

    def latest_training(self, run_id: str) -> dict | None:
        rows = self.query(
            "SELECT train_id, adapter_path, revision, result_json FROM training_runs WHERE run_id = ? AND status = 'finished' "
            "ORDER BY started_at DESC LIMIT 1",
            [run_id],
        )
        if not rows:
            return None
        t, p, rev, res = rows[0]
        return {"train_id": t, "adapter_path": str(self.paths.resolve(p)) if p else None, "revision": rev,
                "result": _paths_in(json.loads(res or "{}"), self.paths.model_ref)}

    def training_metrics(self, train_id: str) -> list[dict]:
        rows = self.query("SELECT metrics_json FROM training_metrics WHERE train_id = ? ORDER BY step", [train_id])
        return [json.loads(r[0]) for r in rows]

    def count_training_steps(self, run_id: str) -> int:
        return self.query("SELECT count(*) FROM training_metrics WHERE run_id = ?", [run_id])[0][0]

    # eval results and reports -------------------------------------------------------------
    def record_eval_result(self, round_id: str, run_id: str, arm: str, model: str, n: int, passes: int, summary: dict) -> None:
        with self.transaction() as con:
            con.execute(
                "INSERT INTO eval_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (round_id) DO UPDATE SET "
                "n = excluded.n, passes = excluded.passes, pass_rate = excluded.pass_rate, summary_json = excluded.summary_json",
                [round_id, run_id, arm, model, n, passes, passes / n if n else 0.0, time.time(), json.dumps(summary, default=str)],
            )

    def eval_summary(self, round_id: str) -> dict | None:
        rows = self.query("SELECT summary_json FROM eval_results WHERE round_id = ?", [round_id])
        return json.loads(rows[0][0] or "{}") if rows else None

    def eval_history(self, run_id: str) -> list[dict]:
        rows = self.query(
            "SELECT round_id, arm, model, n, passes, pass_rate, created_at FROM eval_results WHERE run_id = ? ORDER BY created_at",
            [run_id],
        )
        cols = ("round_id", "arm", "model", "n", "passes", "pass_rate", "created_at")
        return [dict(zip(cols, r)) for r in rows]

    def record_report(self, run_id: str, headline: str, markdown: str, report_dir: str, numbers: dict) -> str:
        report_id = f"{run_id}.report.{time.strftime('%Y%m%dT%H%M%S')}.{uuid.uuid4().hex[:6]}"
        with self.transaction() as con:
            con.execute(
                "INSERT INTO reports VALUES (?, ?, ?, ?, ?, ?, ?)",
                [report_id, run_id, time.time(), headline, markdown, self.paths.rel(report_dir), json.dumps(numbers, default=str)],
            )
        return report_id

    def latest_report(self, run_id: str) -> dict | None:
        rows = self.query(
            "SELECT report_id, headline, report_dir, numbers_json FROM reports WHERE run_id = ? ORDER BY created_at DESC LIMIT 1",
            [run_id],
        )
        if not rows:
            return None
        rid, headline, rdir, numbers = rows[0]
        return {"report_id": rid, "headline": headline, "report_dir": str(self.paths.resolve(rdir)), "numbers": json.loads(numbers)}

    # base model ---------------------------------------------------------------------------
    def record_base_model(self, run_id: str, student_digest: str, source: str, path: str, revision: str | None,
                          info: dict) -> None:
        with self.transaction() as con:
            con.execute("INSERT OR REPLACE INTO base_models VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [run_id, student_digest, source, self.paths.rel(path) if source == "tiny" else path, revision, time.time(), json.dumps(info, default=str)])

    def base_model(self, run_id: str) -> dict | None:
        rows = self.query("SELECT student_digest, source, path, revision, info_json FROM base_models WHERE run_id = ?",
                          [run_id])
        if not rows:
            return None
        digest, source, path, revision, info = rows[0]
        return {"student_digest": digest, "source": source, "path": str(self.paths.resolve(path)) if source == "tiny" else path, "revision": revision,
                "info": json.loads(info)}
