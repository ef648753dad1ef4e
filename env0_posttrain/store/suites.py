"""The eval suites' tasks and boundary ledgers in the store (their own tables: a suite may hold a training task,
which the `tasks` table keys once per run)."""

from __future__ import annotations

import json
import time

from env0_posttrain.store import Store

SUITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS suite_tasks (
  run_id VARCHAR NOT NULL, suite VARCHAR NOT NULL, task_id VARCHAR NOT NULL, task_json VARCHAR NOT NULL,
  PRIMARY KEY (run_id, suite, task_id));
CREATE TABLE IF NOT EXISTS suites (
  run_id VARCHAR NOT NULL, suite VARCHAR NOT NULL, kind VARCHAR NOT NULL, digest VARCHAR NOT NULL,
  boundary_json VARCHAR NOT NULL, created_at DOUBLE NOT NULL, PRIMARY KEY (run_id, suite));
"""


def _ensure(store: Store) -> None:
    with store.transaction() as con:
        con.execute(SUITE_SCHEMA)


def replace_suites(store: Store, run_id: str, suites: list[tuple[str, str, str, dict, list]]) -> None:
    """(name, kind, digest, boundary, tasks) for every suite of the run, replaced whole in one transaction."""
    _ensure(store)
    now = time.time()
    with store.transaction() as con:
        con.execute("DELETE FROM suite_tasks WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM suites WHERE run_id = ?", [run_id])
        for name, kind, digest, boundary, tasks in suites:
            con.execute("INSERT INTO suites VALUES (?, ?, ?, ?, ?, ?)",
                        [run_id, name, kind, digest, json.dumps(boundary), now])
            con.executemany("INSERT INTO suite_tasks VALUES (?, ?, ?, ?)",
                            [[run_id, name, t.id, t.model_dump_json()] for t in tasks])


def suite_task_json(store: Store, run_id: str, suite: str) -> list[str]:
    _ensure(store)
    return [r[0] for r in store.query("SELECT task_json FROM suite_tasks WHERE run_id = ? AND suite = ? "
                                      "ORDER BY task_id", [run_id, suite])]


def suite_boundaries(store: Store, run_id: str) -> dict[str, dict]:
    _ensure(store)
    rows = store.query("SELECT suite, boundary_json FROM suites WHERE run_id = ? ORDER BY suite", [run_id])
    return {name: json.loads(b) for name, b in rows}


def run_suite_tasks(store: Store, run_id: str) -> list[tuple[str, str, str]]:
    """(suite, task_id, task JSON) of every suite of the run; none when the store never held a suite (read
    without creating the tables, so a read-only store serves it)."""
    if not store.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'suite_tasks'"):
        return []
    return store.query("SELECT suite, task_id, task_json FROM suite_tasks WHERE run_id = ?", [run_id])
