"""Many writers on one DuckDB store at once: the locks are waited for, no committed row is lost.

The loss these guard against came from DuckDB reading the file's headers before taking its lock
(store/test_open_race.py forces that interleaving); here it is left to the scheduler.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
from pathlib import Path

import pytest

from env0_posttrain.store import Store
from env0_posttrain_tests.store.test_store import _ep


def _checking_writer(db: str, prefix: str, n: int) -> None:
    """Writes n episodes; every 5th write it reads its round back and fails if an earlier row is gone."""
    s = Store(db)
    rid = s.open_round("r", prefix, "m", n)
    for i in range(n):
        s.write_episode(rid, _ep(f"{prefix}{i}", 0, 1.0, arm="base"))
        if i % 5 == 4:
            missing = {(f"{prefix}{j}", 0) for j in range(i + 1)} - s.done_keys(rid)
            assert not missing, f"{prefix}: committed rows vanished: {sorted(missing)}"


@pytest.mark.slow
def test_eight_processes_write_without_losing_rows(tmp_path: Path):
    db = str(tmp_path / "db.duckdb")
    Store(db)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_checking_writer, args=(db, f"w{i}-", 25)) for i in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0] * 8
    store = Store(db)
    ids = [r[0] for r in store.query("SELECT task_id FROM episodes WHERE run_id = 'r'")]
    assert sorted(ids) == sorted(f"w{i}-{j}" for i in range(8) for j in range(25))
    assert len(store.rounds("r")) == 8


def test_threads_of_one_process_mixing_reads_and_writes_take_turns(tmp_path: Path):
    """A read-only and a read-write DuckDB connection cannot be open in one process at once (DuckDB
    refuses the second); the store's lock makes threads take turns instead of failing."""
    s = Store(tmp_path / "db.duckdb")
    rid = s.open_round("r", "base", "m", 20)
    errors: list[BaseException] = []

    def run(fn) -> None:
        try:
            fn()
        except BaseException as err:  # noqa: BLE001 - handed to the main thread
            errors.append(err)

    def write(prefix: str) -> None:
        for i in range(10):
            s.write_episode(rid, _ep(f"{prefix}{i}", 0, 1.0))

    def read() -> None:
        for _ in range(20):
            s.count_episodes("r")

    threads = [threading.Thread(target=run, args=(f,)) for f in (lambda: write("a"), lambda: write("b"), read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert s.count_episodes("r") == 20


def test_a_nested_connection_in_one_thread_does_not_wait_for_itself(tmp_path: Path):
    s = Store(tmp_path / "db.duckdb", lock_timeout_s=5)
    rid = s.open_round("r", "base", "m", 2)
    with s.transaction() as con:
        con.execute("UPDATE rounds SET n_expected = 3 WHERE round_id = ?", [rid])
        Store(tmp_path / "db.duckdb", lock_timeout_s=5).write_episode(rid, _ep("t", 0, 1.0))
    assert s.done_keys(rid) == {("t", 0)}
    assert s.query("SELECT n_expected FROM rounds")[0][0] == 3
