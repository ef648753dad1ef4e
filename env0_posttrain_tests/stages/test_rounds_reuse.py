"""No paid work twice, at the round level: a finished teacher round is reused unless re-collecting it is asked
for, a retry reuses what another run finished after the retried run started, and a round missing episodes
that failed on infrastructure stays open until a rerun fills the gap."""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

import pytest

from env0_posttrain.agent import AgentSettings, ModelEndpoint, oracle_endpoint
from env0_posttrain.util.paths import Paths
from env0_posttrain.stages import rounds
from env0_posttrain.stages.context import StageContext, load_tasks
from env0_posttrain.stages.task_set import build_task_set
from env0_posttrain.stages.teacher_trajectories import collect_teacher
from env0_posttrain.spec.runspec import parse_spec
from env0_posttrain.store import Store

SPEC = {"run_id": "reuse", "tasks": {"families": ["calendar"], "n_train": 3, "n_eval": 2, "seed": 3},
        "teacher": {"concurrency": 4}, "eval": {"trials": 2, "max_steps": 6, "concurrency": 4}}
FAST = AgentSettings(max_retries=0, max_refills=0, backoff_base_s=0, concurrency=4)


@pytest.fixture
def ctx(tmp_path: Path) -> StageContext:
    spec = parse_spec(SPEC)
    paths = Paths(tmp_path)
    store = Store(paths.db)
    store.upsert_run(spec)
    c = StageContext(spec.run_id, spec, store, paths, logging.getLogger("test"))
    build_task_set(c)
    return c


def _episodes(store: Store, round_id: str) -> list:
    return [(e.task_id, e.trial, e.model_dump_json()) for e in store.load_episodes(round_id)]


def test_a_finished_teacher_round_is_reused_and_recollected_only_when_asked(ctx: StageContext):
    first = collect_teacher(ctx)
    (round_,) = ctx.store.rounds(ctx.run_id, "teacher")
    kept = _episodes(ctx.store, round_["round_id"])
    assert round_["status"] == "finished" and len(kept) == 3

    again = collect_teacher(ctx)  # a rerun, a daemon retry, a stale teacher asset: the same round stands
    assert [r["round_id"] for r in ctx.store.rounds(ctx.run_id, "teacher")] == [round_["round_id"]]
    assert again.metadata["round_id"] == round_["round_id"] and again.data_version == first.data_version
    assert again.metadata["summary"]["reused_round"] is True
    assert _episodes(ctx.store, round_["round_id"]) == kept and ctx.store.count_episodes(ctx.run_id, "teacher") == 3

    asked = collect_teacher(dataclasses.replace(ctx, recollect=frozenset({"teacher"})))
    new = [r for r in ctx.store.rounds(ctx.run_id, "teacher") if r["round_id"] != round_["round_id"]]
    assert [r["round_id"] for r in new] == [asked.metadata["round_id"]] and new[0]["status"] == "finished"
    assert ctx.store.count_episodes(ctx.run_id, "teacher") == 6


def test_a_retry_reuses_an_eval_round_finished_after_its_root_run_started_and_a_new_eval_does_not(
        ctx: StageContext):
    tasks = load_tasks(ctx, ("eval",))
    endpoint = oracle_endpoint(skill=0.7, seed=1)
    root_started = time.time()  # the killed run; a manual relaunch finishes the round meanwhile
    relaunch, _, _ = rounds.rollout(ctx, "sft", tasks, 2, endpoint, FAST)

    retry = dataclasses.replace(ctx, reuse_since=root_started)  # the daemon's retry of the killed run
    assert rounds.rollout(retry, "sft", tasks, 2, endpoint, FAST)[0] == relaunch
    assert len(ctx.store.rounds(ctx.run_id, "sft")) == 1 and ctx.store.count_episodes(ctx.run_id, "sft") == 4

    nightly, _, _ = rounds.rollout(ctx, "sft", tasks, 2, endpoint, FAST)  # a new materialization: a new round
    later = dataclasses.replace(ctx, reuse_since=time.time() + 1)  # a retry of a run started after both
    assert nightly != relaunch and rounds.rollout(later, "sft", tasks, 2, endpoint, FAST)[0] not in (relaunch, nightly)
    assert len(ctx.store.rounds(ctx.run_id, "sft")) == 3


def test_episodes_failing_on_infrastructure_keep_the_round_open_until_a_rerun_fills_them(ctx: StageContext):
    tasks = load_tasks(ctx, ("eval",))
    faulty = ModelEndpoint(model="env0-faulty/env0-oracle/oracle",
                           extra={"env0_fault_rate": 1.0, "env0_fault_kinds": ["server_error"]})
    with pytest.raises(rounds.RoundIncomplete, match=r"4 of 4 episodes still failed on infrastructure"):
        rounds.rollout(ctx, "base", tasks, 2, faulty, FAST)
    (open_,) = ctx.store.rounds(ctx.run_id, "base")
    assert open_["status"] == "running"

    healthy = faulty.model_copy(update={"extra": {"env0_fault_rate": 0.0}})  # the outage is over
    round_id, episodes, summary = rounds.rollout(ctx, "base", tasks, 2, healthy, FAST)
    (closed,) = ctx.store.rounds(ctx.run_id, "base")
    assert round_id == open_["round_id"] == closed["round_id"] and closed["status"] == "finished"
    assert sorted((e.task_id, e.trial) for e in episodes) == sorted((t.id, k) for t in tasks for k in range(2))
    assert summary["completed"] == 4 and summary["infra_failed"] == []


def test_a_teacher_round_closed_with_a_gap_by_older_code_is_reopened_and_filled(ctx: StageContext):
    first = collect_teacher(ctx)
    round_id = first.metadata["round_id"]
    with ctx.store.transaction() as con:  # what a round looked like when it closed over infra failures
        gone = con.execute("SELECT task_id, trial FROM episodes WHERE round_id = ? ORDER BY task_id LIMIT 1",
                           [round_id]).fetchone()
        con.execute("DELETE FROM episodes WHERE round_id = ? AND task_id = ? AND trial = ?", [round_id, *gone])
        con.execute("UPDATE rounds SET summary_json = ? WHERE round_id = ?",
                    [f'{{"infra_failed": ["{gone[0]}:{gone[1]}"], "crashed": []}}', round_id])
    assert len(ctx.store.done_keys(round_id)) == 2

    rerun = collect_teacher(ctx)
    assert rerun.metadata["round_id"] == round_id and len(ctx.store.rounds(ctx.run_id, "teacher")) == 1
    assert len(ctx.store.done_keys(round_id)) == 3 and ctx.store.rounds(ctx.run_id, "teacher")[0]["status"] == "finished"
