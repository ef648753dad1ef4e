"""Concurrent rollouts: the bound, resume keys, refills, fault injection, accounting."""

from __future__ import annotations

import asyncio
import logging
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
from env0_posttrain.agent.llm import litellm, register_provider
from env0_posttrain.agent.providers.base import Env0Provider, fill_response
from env0_posttrain_tests.support.agent import NotesEnv, notes_task

FAST = AgentSettings(backoff_base_s=0.001, backoff_max_s=0.002, concurrency=8)
TASKS = [notes_task(i) for i in range(10)]


def rollouts(endpoint, settings=FAST, tasks=TASKS, trials=2, done=None, sink=None, **kw):
    return run_rollouts_sync(tasks, "teacher", trials, endpoint, settings, "run1", done or set(),
                             sink.append if sink is not None else None, env=NotesEnv(), progress=False, **kw)


def test_every_task_and_trial_is_delivered_once_and_summarised(caplog):
    sink = []
    with caplog.at_level(logging.INFO, logger="env0_posttrain.agent"):
        s = rollouts(oracle_endpoint(skill=0.7), sink=sink)
    keys = [e.key for e in sink]
    assert len(keys) == len(set(keys)) == 20 == s.completed == s.planned
    assert s.passed == sum(e.passed for e in sink) and 0 < s.passed < 20
    assert s.stop_conditions == dict(Counter(e.stop_condition for e in sink))
    assert s.model_calls == sum(len(e.exchanges) for e in sink)
    assert s.error_counts == dict(sum((Counter(e.error_counts) for e in sink), Counter()))
    assert s.mean_reward == pytest.approx(sum(e.reward for e in sink) / 20)
    lines = [r for r in caplog.records if r.getMessage().startswith("episode run=run1")]
    assert len(lines) == 20 and "stop=" in lines[0].getMessage()


def test_done_keys_are_skipped_in_both_key_forms():
    sink = []
    done = {("run1", "teacher", "notes-0", 0), ("notes-1", 1)}
    s = rollouts(oracle_endpoint(), done=done, sink=sink)
    got = {(e.task_id, e.trial) for e in sink}
    assert s.skipped == 2 and s.completed == 18
    assert ("notes-0", 0) not in got and ("notes-1", 1) not in got and ("notes-0", 1) in got


def test_concurrency_is_bounded():
    class Gauge(Env0Provider):
        live = peak = 0

        async def respond(self, model, messages, options, meta, model_response):
            Gauge.live += 1
            Gauge.peak = max(Gauge.peak, Gauge.live)
            await asyncio.sleep(0.01)
            Gauge.live -= 1
            return fill_response(model_response, model, {"role": "assistant", "content": "done"})

    register_provider("env0-gauge", Gauge())
    s = rollouts(ModelEndpoint(model="env0-gauge/g"), AgentSettings(concurrency=3), trials=1)
    assert s.completed == 10 and Gauge.peak == 3


def test_infra_failures_are_refilled_into_one_healthy_trajectory():
    sink = []
    endpoint = ModelEndpoint(model="env0-faulty/env0-oracle/oracle",
                             extra={"env0_fault_rate": 0.5, "env0_fault_kinds": ["rate_limit"]})
    settings = AgentSettings(max_retries=0, max_refills=20, backoff_base_s=0, concurrency=8)
    s = rollouts(endpoint, settings, sink=sink)
    assert s.refills > 0 and s.infra_failed == [] and s.completed == 20
    assert all(e.stop_condition == "agent_completed" and e.infra_errors == 0 for e in sink)
    assert len({e.key for e in sink}) == 20
    assert s.error_counts["rate_limit"] == s.infra_errors >= s.refills


def test_episodes_that_never_recover_are_reported_not_delivered():
    sink = []
    endpoint = ModelEndpoint(model="env0-faulty/env0-oracle/oracle",
                             extra={"env0_fault_rate": 1.0, "env0_fault_kinds": ["server_error"]})
    s = rollouts(endpoint, AgentSettings(max_retries=1, max_refills=1, backoff_base_s=0), tasks=TASKS[:3], trials=1,
                 sink=sink)
    assert sink == [] and sorted(s.infra_failed) == ["notes-0:0", "notes-1:0", "notes-2:0"]
    assert s.refills == 3 and s.error_counts == {"server_error": 12} and s.unscored == 3


def test_twenty_percent_faults_end_with_zero_unscored_rows_and_counted_by_kind():
    sink = []
    before = Counter(injected_faults())
    endpoint = ModelEndpoint(model="env0-faulty/env0-oracle/oracle", extra={"env0_fault_rate": 0.2})
    s = rollouts(endpoint, AgentSettings(max_steps=20, backoff_base_s=0.001, concurrency=8), trials=5, sink=sink)
    injected = Counter(injected_faults()) - before
    assert s.completed == 50 and s.unscored == 0 and all(e.verifier is not None for e in sink)
    assert all(e.passed for e in sink)  # skill 1: every fault was absorbed
    assert set(injected) == {"timeout", "rate_limit", "server_error", "connection", "malformed_json", "empty_reply"}
    renamed = {"malformed_json": "malformed_call"}
    assert s.error_counts == {renamed.get(k, k): v for k, v in injected.items()}
    assert s.infra_errors == sum(injected[k] for k in ("timeout", "rate_limit", "server_error", "connection"))
    assert s.agent_errors == injected["malformed_json"] + injected["empty_reply"]


def test_fault_draws_depend_on_the_episode_not_on_what_this_process_ran_before():
    """A rerun of the same episodes (a resume, a re-materialization) meets the same faults, retries included."""
    endpoint = ModelEndpoint(model="env0-faulty/env0-oracle/oracle", extra={"env0_fault_rate": 0.3, "env0_fault_seed": 7})
    settings = AgentSettings(max_steps=20, max_retries=2, max_refills=3, backoff_base_s=0.001, concurrency=4)
    runs = []
    for _ in range(2):
        sink = []
        s = rollouts(endpoint, settings, trials=2, sink=sink)
        runs.append((s.error_counts, s.refills, {e.key: (e.error_counts, [x.attempts for x in e.exchanges]) for e in sink}))
    assert runs[0][0] and runs[0][2] == runs[1][2] and runs[0][:2] == runs[1][:2]
    other = rollouts(endpoint.model_copy(update={"extra": {**endpoint.extra, "env0_fault_seed": 8}}), settings, trials=2)
    assert other.error_counts != runs[0][0]  # the seed, not the process, decides


def test_tokens_and_cost_are_accounted_where_litellm_knows_the_price():
    class Priced(Env0Provider):
        async def respond(self, model, messages, options, meta, model_response):
            return fill_response(model_response, model, {"role": "assistant", "content": "done"},
                                 prompt_tokens=1000, completion_tokens=10)

    register_provider("env0-priced", Priced())
    litellm.register_model({"env0-priced/p": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                              "litellm_provider": "env0-priced", "mode": "chat"}})
    s = rollouts(ModelEndpoint(model="env0-priced/p"), trials=1)
    assert s.usage.prompt_tokens == 10_000 and s.usage.completion_tokens == 100
    assert s.usage.cost_usd == pytest.approx(10 * (1000e-6 + 10 * 2e-6))
    unknown = rollouts(ModelEndpoint(model="env0-gauge/unpriced"), trials=1)
    assert unknown.usage.cost_usd is None


def _count_litellm_pricing(monkeypatch) -> list[int]:
    """How often litellm prices a reply itself (its cost calculator, not a price the provider gave)."""
    import litellm.cost_calculator as cost_calculator

    calls = [0]
    original = cost_calculator.completion_cost

    def counting(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(cost_calculator, "completion_cost", counting)
    return calls


def _register_priced_model(provider: str) -> None:
    """`provider/p`: 1000 prompt + 10 completion tokens per call, priced by litellm's model map."""

    class Priced(Env0Provider):
        async def respond(self, model, messages, options, meta, model_response):
            return fill_response(model_response, model, {"role": "assistant", "content": "done"},
                                 prompt_tokens=1000, completion_tokens=10)

    register_provider(provider, Priced())
    litellm.register_model({f"{provider}/p": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                              "litellm_provider": provider, "mode": "chat"}})


def test_offline_models_give_litellm_their_price_so_it_never_prices_them(monkeypatch):
    _register_priced_model("env0-priced2")
    pricing = _count_litellm_pricing(monkeypatch)
    s = rollouts(oracle_endpoint(), trials=1)
    assert s.model_calls > 10 and s.usage.cost_usd == 0.0 and pricing[0] == 0
    priced = rollouts(ModelEndpoint(model="env0-priced2/p"), trials=1)  # no call_cost: litellm prices it
    assert pricing[0] >= priced.model_calls == 10
    assert priced.usage.cost_usd == pytest.approx(10 * (1000e-6 + 10 * 2e-6))


def test_the_fault_wrapper_reports_its_inner_models_price_to_litellm(monkeypatch):
    _register_priced_model("env0-priced3")
    pricing = _count_litellm_pricing(monkeypatch)
    endpoint = ModelEndpoint(model="env0-faulty/env0-priced3/p", extra={"env0_fault_rate": 0.0})
    s = rollouts(endpoint, trials=1)
    assert s.model_calls == 10 and s.usage.cost_usd == pytest.approx(10 * (1000e-6 + 10 * 2e-6))
    assert pricing[0] == 10  # the inner calls only; the wrapper's replies carry the inner price


def test_a_fatal_model_error_aborts_the_rollout():
    class Denied(Env0Provider):
        async def respond(self, model, messages, options, meta, model_response):
            raise litellm.AuthenticationError("invalid api key", llm_provider="x", model=model)

    register_provider("env0-denied", Denied())
    with pytest.raises(FatalModelError):
        rollouts(ModelEndpoint(model="env0-denied/d"))


def test_sync_wrapper_works_inside_a_running_loop():
    async def inside():
        return rollouts(oracle_endpoint(), tasks=TASKS[:2], trials=1)

    s = asyncio.run(inside())
    assert s.completed == 2 and s.passed == 2


def test_store_failure_is_not_swallowed():
    def broken(_ep):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_rollouts_sync(TASKS, "teacher", 1, oracle_endpoint(), FAST, "run1", set(), broken, env=NotesEnv(),
                          progress=False)


def test_steering_on_a_student_arm_is_refused_before_anything_runs():
    sink = []
    with pytest.raises(ValueError, match="teacher-only"):
        run_rollouts_sync(TASKS, "base", 1, oracle_endpoint(), AgentSettings(steering_prompt="be brief"), "run1",
                          set(), sink.append, env=NotesEnv(), progress=False)
    assert sink == []


def test_garbage_collection_is_relaxed_during_a_rollout_and_restored_after():
    import gc

    before = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    seen = []
    run_rollouts_sync(TASKS[:3], "teacher", 1, oracle_endpoint(), FAST, "run1", set(),
                      lambda _ep: seen.append((gc.get_threshold(), gc.get_freeze_count())), env=NotesEnv(),
                      progress=False)
    assert len(seen) == 3
    assert all(th[0] >= 20_000 and th[1:] == before[1:] and frozen > frozen_before for th, frozen in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen_before


def test_a_slow_store_write_does_not_stall_the_loop_and_what_queues_behind_it_goes_in_one_batch():
    """The stage's episode writer (stages/rounds.py): while a write waits (as on another process's store lock), the
    event loop goes on handing over episodes; the next write takes all that queued up, in order."""
    import threading

    from env0_posttrain.stages.rounds import episode_writer

    batches, started, release = [], threading.Event(), threading.Event()

    def write_many(eps):
        started.set()
        if not batches and not release.wait(timeout=30):
            raise AssertionError("never released")
        batches.append(list(eps))

    async def play():
        with episode_writer(write_many) as on_episode:
            first = on_episode("ep1")
            while not started.is_set():  # the writer thread has taken ep1 and is stuck in its write
                await asyncio.sleep(0.001)
            later = [on_episode("ep2"), on_episode("ep3")]
            await asyncio.sleep(0.01)
            assert not first.done()  # still writing, and yet this coroutine ran on
            release.set()
            await asyncio.gather(first, *later)

    asyncio.run(play())
    assert batches == [["ep1"], ["ep2", "ep3"]]


def test_a_failed_batch_write_fails_its_episodes_and_nothing_is_counted_done():
    from env0_posttrain.stages.rounds import episode_writer

    def write_many(eps):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), episode_writer(write_many) as on_episode:
        run_rollouts_sync(TASKS, "teacher", 1, oracle_endpoint(), FAST, "run1", set(), on_episode, env=NotesEnv(),
                          progress=False)


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_the_run_specs_fault_rate_reaches_the_faulty_teacher(rate):
    """teacher.fault_rate is what the env0-faulty provider draws with: 0 breaks no call, 1 breaks every one."""
    from env0_posttrain.spec.runspec import parse_spec

    spec = parse_spec({"run_id": "r", "teacher": {"model": "env0-faulty/env0-oracle/oracle", "skill": 1.0,
                                                  "fault_rate": rate}}, "test")
    endpoint = ModelEndpoint.from_teacher(spec.teacher)
    s = rollouts(endpoint, AgentSettings(max_retries=0, max_refills=0, backoff_base_s=0), tasks=TASKS[:3], trials=1)
    assert (s.infra_errors + s.agent_errors == 0) if rate == 0.0 else (s.completed + len(s.infra_failed) == 3
                                                                        and s.passed == 0)


def test_a_fault_rate_on_any_teacher_wraps_it_in_the_faulty_provider():
    from env0_posttrain.spec.runspec import parse_spec

    spec = parse_spec({"run_id": "r", "teacher": {"model": "env0-oracle/oracle", "skill": 1.0, "fault_rate": 1.0}}, "t")
    endpoint = ModelEndpoint.from_teacher(spec.teacher)
    assert endpoint.model == "env0-faulty/env0-oracle/oracle" and endpoint.extra["env0_skill"] == 1.0
    s = rollouts(endpoint, AgentSettings(max_retries=0, max_refills=0, backoff_base_s=0), tasks=TASKS[:2], trials=1)
    assert s.passed == 0
    plain = parse_spec({"run_id": "r", "teacher": {"model": "env0-oracle/oracle"}}, "t")
    assert ModelEndpoint.from_teacher(plain.teacher).model == "env0-oracle/oracle"  # no rate: no wrapper
