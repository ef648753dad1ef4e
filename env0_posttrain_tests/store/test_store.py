"""The DuckDB store: rounds resume or accumulate, episodes are written once, writers in two processes wait."""

import multiprocessing as mp
from pathlib import Path

from env0_posttrain.agent.records import Episode
from env0_posttrain.spec.runspec import RunSpec
from env0_posttrain.store import Store
from env0_posttrain.tasks.model import VerifierResult


def _ep(task_id: str, trial: int, reward: float, arm: str = "base") -> Episode:
    return Episode(
        run_id="r", arm=arm, task_id=task_id, trial=trial, model="m",
        messages=[{"role": "user", "content": "hi"}], tools=[], stop_condition="agent_completed",
        verifier=VerifierResult(reward=reward),
    )


def test_round_resumes_until_finished_then_history_accumulates(tmp_path: Path):
    s = Store(tmp_path / "db.duckdb")
    s.upsert_run(RunSpec(run_id="r"))
    r1 = s.open_round("r", "base", "m", 2)
    s.write_episode(r1, _ep("t1", 0, 1.0))
    s.write_episode(r1, _ep("t1", 0, 0.0))  # a duplicate write is ignored, the first one stands
    assert s.open_round("r", "base", "m", 2) == r1  # unfinished: resumed
    assert s.done_keys(r1) == {("t1", 0)}
    s.write_episode(r1, _ep("t2", 0, 0.0))
    s.finish_round(r1, {"n": 2})
    eps = s.load_episodes(r1)
    assert [(e.task_id, e.reward) for e in eps] == [("t1", 1.0), ("t2", 0.0)]
    r2 = s.open_round("r", "base", "m", 2)
    assert r2 != r1 and s.latest_round("r", "base") == r1  # r2 is not finished yet
    s.record_eval_result(r1, "r", "base", "m", 2, 1, {})
    s.record_eval_result(r2, "r", "base", "m", 2, 2, {})
    assert [h["passes"] for h in s.eval_history("r")] == [1, 2]
    assert s.get_run("r") == RunSpec(run_id="r")


def _writer(db: str, prefix: str, n: int) -> None:
    s = Store(db)
    rid = s.open_round("r", prefix, "m", n)
    for i in range(n):
        s.write_episode(rid, _ep(f"{prefix}{i}", 0, 1.0, arm="base"))


def test_two_processes_write_without_losing_rows(tmp_path: Path):
    db = str(tmp_path / "db.duckdb")
    Store(db)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(db, p, 25)) for p in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert Store(db).count_episodes("r") == 50


def test_sft_rows_replace_is_whole(tmp_path: Path):
    s = Store(tmp_path / "db.duckdb")
    s.replace_sft_rows("r", [("a", 1.0, {"messages": [1]}), ("b", None, {"messages": [2]})], "round")
    s.replace_sft_rows("r", [("c", 0.5, {"messages": [3]})], "round2")
    assert s.load_sft_rows("r") == [{"messages": [3]}]
    assert s.query("SELECT task_id, reward, source_round FROM sft_rows WHERE run_id = 'r'") == [("c", 0.5, "round2")]
