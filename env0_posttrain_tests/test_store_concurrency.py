"""Eight processes writing one DuckDB store at once: the file lock is waited for, no row is lost."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from env0_posttrain.store import Store
from env0_posttrain_tests.test_store import _writer


@pytest.mark.slow
def test_eight_processes_write_without_losing_rows(tmp_path: Path):
    db = str(tmp_path / "db.duckdb")
    Store(db)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(db, f"w{i}-", 25)) for i in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0] * 8
    store = Store(db)
    assert store.count_episodes("r") == 200
    assert len(store.rounds("r")) == 8
