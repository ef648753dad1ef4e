"""Fail fast: what no retry can fix stops the rollout at once; transient failures keep their retries.

Every kind is raised by a litellm custom provider, as litellm's own exception classes (or, for a
missing package, the ImportError litellm wraps), so the harness sees what a real provider produces.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from env0_posttrain.agent import AgentSettings, FatalModelError, ModelEndpoint, oracle_endpoint, run_rollouts_sync
from env0_posttrain.agent.llm import litellm, register_provider
from env0_posttrain.agent.providers.base import Env0Provider, fill_response
from env0_posttrain_tests.support.agent import NotesEnv, notes_task

FAST = AgentSettings(backoff_base_s=0.001, backoff_max_s=0.002, concurrency=4, max_retries=3, max_refills=2)
TASKS = [notes_task(i) for i in range(6)]


class Raising(Env0Provider):
    """Raises `make()` for the first `fail_calls` calls (all of them by default), then answers 'done'."""

    def __init__(self, make, fail_calls: int | None = None):
        super().__init__()
        self.make, self.fail_calls, self.calls = make, fail_calls, 0

    async def respond(self, model, messages, options, meta, model_response):
        self.calls += 1
        if self.fail_calls is None or self.calls <= self.fail_calls:
            raise self.make(model)
        return fill_response(model_response, model, {"role": "assistant", "content": "done"})


def _refused(model):
    err = litellm.InternalServerError(message="OpenAIException - Connection error.", llm_provider="openai", model=model)
    err.__cause__ = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 1)")
    return err


def _rollouts(provider: Raising, name: str, settings=FAST, sink=None):
    register_provider(name, provider)
    return run_rollouts_sync(TASKS, "teacher", 1, ModelEndpoint(model=f"{name}/m"), settings, "ff-run", set(),
                             sink.append if sink is not None else None, env=NotesEnv(), progress=False)


FATAL = {
    "missing_package": lambda m: ModuleNotFoundError("No module named 'mcp'"),
    "authentication": lambda m: litellm.AuthenticationError(message="invalid api key", llm_provider="x", model=m),
    "not_found": lambda m: litellm.NotFoundError(message="model does not exist", llm_provider="x", model=m),
    "bad_request": lambda m: litellm.BadRequestError(message="unsupported parameter top_p", llm_provider="x", model=m),
}


@pytest.mark.parametrize("kind", sorted(FATAL))
def test_deterministic_errors_stop_the_rollout_without_retries(kind, caplog):
    provider = Raising(FATAL[kind])
    with caplog.at_level(logging.WARNING, logger="env0_posttrain.agent"), pytest.raises(FatalModelError) as info:
        _rollouts(provider, f"env0-ff-{kind.replace('_', '-')}")
    assert info.value.kind == kind and kind in str(info.value)
    assert provider.calls <= FAST.concurrency, "one call per started episode: no retry, no refill, no new episode"
    assert not [r for r in caplog.records if r.exc_info], "no traceback per episode"


def test_an_unknown_provider_stops_the_rollout_naming_the_model_not_the_sampling():
    """litellm raises BadRequestError for a model id whose prefix it cannot route (`env0-orcale/oracle`): that is
    the model id's fault, so the stop names `model` (the spec's teacher.model), not the request's sampling."""
    from env0_posttrain.agent.fail_fast import fix_for

    with pytest.raises(FatalModelError) as info:
        run_rollouts_sync(TASKS, "teacher", 1, ModelEndpoint(model="env0-orcale/oracle"), FAST, "ff-run", set(),
                          env=NotesEnv(), progress=False)
    assert info.value.kind == "unknown_provider" and fix_for(info.value.kind)[1] == "model"


@pytest.mark.parametrize("backoff_s", [0.0, 0.001])
def test_connection_refused_on_every_try_of_the_first_episodes_stops_the_rollout(backoff_s):
    """The stop comes after 3 episodes x 2 refused tries in all, however the four running episodes' retries
    interleave, and no episode starts a call once it tripped: only calls already on their way to the provider
    (at most one per other running episode) come on top, far below the 4 x 4 x 3 that retries and refills of
    the four running episodes would make."""
    from env0_posttrain.agent.fail_fast import CURRENT

    class Recording(Raising):
        async def respond(self, model, messages, options, meta, model_response):
            breaker = CURRENT.get()
            self.after_trip = getattr(self, "after_trip", 0) + bool(breaker is not None and breaker.tripped)
            return await super().respond(model, messages, options, meta, model_response)

    provider = Recording(_refused)
    settings = FAST.model_copy(update={"backoff_base_s": backoff_s})
    with pytest.raises(FatalModelError) as info:
        _rollouts(provider, f"env0-ff-refused-{len(str(backoff_s))}", settings=settings)
    assert info.value.kind == "connection_refused" and "first 3 episodes" in str(info.value)
    in_flight = FAST.concurrency - 1
    assert provider.after_trip <= in_flight
    assert 3 * 2 <= provider.calls - provider.after_trip <= 3 * 2 + in_flight  # reached the provider before it tripped
    assert provider.calls <= 3 * 2 + in_flight


def test_a_refused_connection_that_heals_is_retried_as_before():
    provider = Raising(_refused, fail_calls=1)
    sink = []
    s = _rollouts(provider, "env0-ff-refused-once", sink=sink)
    assert s.completed == len(TASKS) and s.error_counts == {"connection_refused": 1}


def test_refusals_after_a_successful_call_are_ordinary_infra_failures():
    class UpThenDown(Raising):
        async def respond(self, model, messages, options, meta, model_response):
            self.calls += 1
            if self.calls == 1:
                return fill_response(model_response, model, {"role": "assistant", "content": "done"})
            raise _refused(model)

    s = _rollouts(UpThenDown(None), "env0-ff-up-then-down", settings=FAST.model_copy(update={"concurrency": 1}))
    assert s.completed == 1 and len(s.infra_failed) == len(TASKS) - 1  # refilled, then reported: not fatal


TRANSIENT = {
    "timeout": lambda m: litellm.Timeout(message="timed out", llm_provider="x", model=m),
    "rate_limit": lambda m: litellm.RateLimitError(message="429", llm_provider="x", model=m),
    "server_error": lambda m: litellm.ServiceUnavailableError(message="503", llm_provider="x", model=m),
    "connection": lambda m: litellm.APIConnectionError(message="Connection reset by peer", llm_provider="x", model=m),
}


@pytest.mark.parametrize("kind", sorted(TRANSIENT))
def test_transient_errors_keep_their_retries_and_refills(kind):
    always = Raising(TRANSIENT[kind])
    s = _rollouts(always, f"env0-ff-t-{kind.replace('_', '-')}", settings=FAST.model_copy(update={"concurrency": 1}))
    per_episode = (FAST.max_retries + 1) * (FAST.max_refills + 1)
    assert s.completed == 0 and len(s.infra_failed) == len(TASKS) and always.calls == per_episode * len(TASKS)
    assert s.refills == FAST.max_refills * len(TASKS) and s.error_counts == {kind: always.calls}

    healing = Raising(TRANSIENT[kind], fail_calls=2)
    s = _rollouts(healing, f"env0-ff-h-{kind.replace('_', '-')}")
    assert s.completed == len(TASKS) and s.error_counts == {kind: 2}


def test_an_unset_key_variable_stops_before_any_episode(monkeypatch):
    monkeypatch.delenv("ENV0_FF_MISSING_KEY", raising=False)
    endpoint = oracle_endpoint().model_copy(update={"api_key_env": "ENV0_FF_MISSING_KEY"})
    with pytest.raises(FatalModelError, match="ENV0_FF_MISSING_KEY") as info:
        run_rollouts_sync(TASKS, "teacher", 1, endpoint, FAST, "ff-run", set(), None, env=NotesEnv(), progress=False)
    assert info.value.kind == "missing_key"


def test_the_stage_names_the_spec_field_and_keeps_the_stored_episodes(tmp_path: Path):
    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages.rollout_errors import RolloutStopped
    from env0_posttrain.spec.runspec import parse_spec
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.stages.rounds import rollout as _rollout
    from env0_posttrain.store import Store
    from env0_posttrain.tasks import generate_tasks

    spec = parse_spec({"run_id": "ff", "teacher": {"model": "env0-ff-stage/m", "api_base": "http://127.0.0.1:1"}})
    paths = Paths(tmp_path)
    store = Store(paths.db)
    ctx = StageContext("ff", spec, store, paths, logging.getLogger("test"))
    tasks = generate_tasks(0, per_template=1)[:4]
    register_provider("env0-ff-stage", Raising(_refused))
    round_id = store.open_round("ff", "teacher", "env0-ff-stage/m", 4)
    run_rollouts_sync(tasks[:1], "teacher", 1, oracle_endpoint(), FAST, "ff", set(),
                      lambda ep: store.write_episode(round_id, ep), progress=False)
    with pytest.raises(RolloutStopped) as info:
        _rollout(ctx, "teacher", tasks, 1, ModelEndpoint(model="env0-ff-stage/m"), FAST)
    msg = str(info.value)
    assert info.value.spec_field == "teacher.api_base" and "`teacher.api_base`" in msg and "1 of 4 episodes" in msg
    assert store.done_keys(round_id) == {(tasks[0].id, 0)}
    assert store.rounds("ff", "teacher")[0]["status"] == "running", "left open: a rerun resumes it"


@pytest.mark.slow
def test_a_real_refused_port_stops_a_sharded_rollout():
    """litellm's own OpenAI client against a closed local port, episodes in two worker processes."""
    import socket

    from env0_posttrain.tasks import generate_tasks

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = ModelEndpoint(model="openai/gpt-x", api_base=f"http://127.0.0.1:{port}/v1", extra={"api_key": "sk-x"})
    settings = AgentSettings(concurrency=4, processes=2, max_retries=5, max_refills=3)
    with pytest.raises(FatalModelError) as info:
        run_rollouts_sync(generate_tasks(0, per_template=1)[:8], "teacher", 1, endpoint, settings, "ff-real", set(),
                          None, progress=False)
    assert info.value.kind == "connection_refused" and info.value.model == "openai/gpt-x"


def test_infra_retries_wait_a_full_jitter_backoff_capped_by_the_settings():
    from tenacity import RetryCallState

    from env0_posttrain.agent.model_call import retrying

    settings = AgentSettings(max_retries=4, backoff_base_s=0.5, backoff_max_s=3.0)
    policy = retrying(settings)
    state = RetryCallState(policy, fn=None, args=(), kwargs={})
    for attempt, cap in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (6, 3.0)):
        state.attempt_number = attempt
        waits = [policy.wait(state) for _ in range(200)]
        assert 0 <= min(waits) and max(waits) <= cap and max(waits) > cap / 2
    state.attempt_number = settings.max_retries + 1
    assert policy.stop(state), "max_retries more tries after the first, then the failure is recorded"
