"""Rollouts sharded over worker processes: the same episodes and summary as in-process, the parent writes."""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter

import pytest

from env0_posttrain.agent import (
    AgentSettings,
    FatalModelError,
    ModelEndpoint,
    injected_faults,
    oracle_endpoint,
    run_rollouts_sync,
)
from env0_posttrain.agent.llm import register_provider
from env0_posttrain.agent.providers.base import Env0Provider, fill_response
from env0_posttrain.agent.workers import routable_in_fresh_process, shard_refusal, split_concurrency
from env0_posttrain_tests.support.agent import NotesEnv, notes_task

TASKS = [notes_task(i, answer=i % 3 == 0) for i in range(12)]
VOLATILE = {"duration_s", "processes", "worker_cpu_s", "backend"}  # where the episodes ran, not what they did


def settings(processes: int, **kw) -> AgentSettings:
    return AgentSettings(concurrency=6, processes=processes, backoff_base_s=0.001, backoff_max_s=0.002, **kw)


def rollouts(endpoint, processes, sink=None, done=None, trials=2, tasks=TASKS, **kw):
    return run_rollouts_sync(tasks, "teacher", trials, endpoint, settings(processes, **kw), "w-run", done or set(),
                             sink.append if sink is not None else None, env=NotesEnv(), progress=False)


def comparable(ep) -> dict:
    d = ep.model_dump(exclude={"started_at", "duration_s"})
    for ex in d["exchanges"]:
        ex.pop("latency_s")
    return d


def test_concurrency_is_split_evenly_over_the_workers():
    assert split_concurrency(64, 2) == [32, 32]
    assert split_concurrency(5, 2) == [3, 2]
    assert split_concurrency(3, 8) == [1, 1, 1]  # never more workers than slots
    assert sum(split_concurrency(17, 3)) == 17


def test_only_models_a_fresh_process_can_route_are_sharded():
    assert routable_in_fresh_process("env0-oracle/oracle")
    assert routable_in_fresh_process("env0-faulty/env0-oracle/oracle")
    assert routable_in_fresh_process("openai/gpt-4o-mini") and routable_in_fresh_process("hosted_vllm/Qwen/Qwen3-8B")
    assert not routable_in_fresh_process("env0-local/student")  # a model loaded in this process
    assert not routable_in_fresh_process("env0-faulty/env0-local/student")

    class Here(Env0Provider):
        async def respond(self, model, messages, options, meta, model_response):
            return fill_response(model_response, model, {"role": "assistant", "content": "done"})

    register_provider("env0-here", Here())
    assert not routable_in_fresh_process("env0-here/x")
    assert "registered in this process only" in shard_refusal("env0-here/x", NotesEnv())
    assert "cannot be sent" in shard_refusal("env0-oracle/oracle", type("Local", (), {})())
    assert shard_refusal("env0-oracle/oracle", NotesEnv()) is None


def test_sharded_rollout_delivers_the_same_episodes_and_summary_as_in_process():
    here, there = [], []
    endpoint = oracle_endpoint(skill=0.6, seed=5)
    a = rollouts(endpoint, 1, sink=here)
    b = rollouts(endpoint, 2, sink=there)
    assert a.processes == 1 and a.worker_cpu_s == 0.0
    assert b.processes == 2 and b.worker_cpu_s > 0.0
    assert len(there) == 24 == len({e.key for e in there})
    assert 0 < b.passed < 24
    assert sorted(map(comparable, here), key=str) == sorted(map(comparable, there), key=str)
    assert a.model_dump(exclude=VOLATILE) == b.model_dump(exclude=VOLATILE)


def test_sharded_rollout_skips_done_keys_and_logs_one_line_per_episode_in_the_parent(caplog):
    sink = []
    done = {("w-run", "teacher", "notes-0", 0), ("notes-1", 1)}
    with caplog.at_level(logging.INFO, logger="env0_posttrain.agent"):
        s = rollouts(oracle_endpoint(), 2, sink=sink, done=done)
    assert s.skipped == 2 and s.completed == 22 == len(sink) and s.processes == 2
    assert {("notes-0", 0), ("notes-1", 1)}.isdisjoint({(e.task_id, e.trial) for e in sink})
    lines = [r for r in caplog.records if r.getMessage().startswith("episode run=w-run")]
    assert len(lines) == 22 and all(r.process == os.getpid() for r in lines)


def test_faults_injected_in_workers_are_absorbed_and_counted_in_the_parent():
    sink = []
    before = Counter(injected_faults())
    endpoint = ModelEndpoint(model="env0-faulty/env0-oracle/oracle", extra={"env0_fault_rate": 0.2})
    s = rollouts(endpoint, 2, sink=sink, trials=3, max_steps=20)
    injected = Counter(injected_faults()) - before
    assert s.processes == 2 and s.completed == 36 and s.unscored == 0 and s.infra_errors > 0
    assert all(e.verifier is not None for e in sink)
    renamed = {"malformed_json": "malformed_call"}
    assert sum(injected.values()) > 0
    assert s.error_counts == {renamed.get(k, k): v for k, v in injected.items()}


def test_a_model_only_this_process_knows_runs_here_with_a_warning(caplog):
    class Local(Env0Provider):
        pids: set = set()

        async def respond(self, model, messages, options, meta, model_response):
            Local.pids.add(os.getpid())
            return fill_response(model_response, model, {"role": "assistant", "content": "done"})

    register_provider("env0-onlyhere", Local())
    with caplog.at_level(logging.WARNING, logger="env0_posttrain.agent"):
        s = rollouts(ModelEndpoint(model="env0-onlyhere/m"), 2, trials=1)
    assert s.completed == 12 and s.processes == 1 and Local.pids == {os.getpid()}
    assert any("running in this process only" in r.getMessage() for r in caplog.records)


def test_a_fatal_error_in_a_worker_aborts_the_rollout_and_the_workers_stay_usable(monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    sink = []
    with pytest.raises(FatalModelError, match="authentication"):
        rollouts(ModelEndpoint(model="openai/gpt-4o-mini"), 2, sink=sink, trials=1)
    assert sink == []
    assert rollouts(oracle_endpoint(), 2, trials=1).completed == 12  # the pool was stopped cleanly and reused


def test_a_failing_writer_stops_a_sharded_rollout():
    def broken(_ep):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_rollouts_sync(TASKS, "teacher", 1, oracle_endpoint(), settings(2), "w-run", set(), broken,
                          env=NotesEnv(), progress=False)
    assert rollouts(oracle_endpoint(), 2, trials=1).completed == 12


def test_sharded_rollouts_work_from_inside_a_running_loop():
    async def inside():
        return rollouts(oracle_endpoint(), 2, trials=1)

    s = asyncio.run(inside())
    assert s.completed == 12 and s.processes == 2


def test_the_run_spec_shards_teacher_and_eval_rollouts_but_a_local_student_stays_here():
    from env0_posttrain.stages.arms import rollout_settings
    from env0_posttrain.spec.runspec import SpecError, parse_spec

    default = parse_spec({"run_id": "d"})
    assert default.teacher.processes == default.eval.processes == 1
    assert {rollout_settings(default, arm).processes for arm in ("teacher", "teacher_eval", "base", "sft")} == {1}
    spec = parse_spec({"run_id": "p", "teacher": {"processes": 2, "concurrency": 6}, "eval": {"processes": 3}})
    assert rollout_settings(spec, "teacher").processes == rollout_settings(spec, "teacher_eval").processes == 2
    assert rollout_settings(spec, "base").processes == rollout_settings(spec, "sft").processes == 3
    for section in ("teacher", "eval"):
        with pytest.raises(SpecError, match=f"{section}.processes"):
            parse_spec({"run_id": "bad", section: {"processes": 0}})
    teacher = rollout_settings(spec, "teacher")
    summary = run_rollouts_sync(TASKS, "teacher", 1, oracle_endpoint(), teacher, "spec-run", set(), None,
                                env=NotesEnv(), progress=False)
    assert summary.processes == 2 and summary.completed == len(TASKS)
    # the tiny student is a provider of this process: its eval rollouts stay here whatever the spec says
    assert "registered in this process only" in shard_refusal("env0-local/student", NotesEnv())
