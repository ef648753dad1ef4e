"""The episode loop: stop conditions, agent errors fed back, steering, the oracle teacher's skill."""

from __future__ import annotations

import asyncio
import json

import pytest

from env0_posttrain.agent import (
    AgentSettings,
    FatalModelError,
    ModelEndpoint,
    oracle_endpoint,
    plan_episode,
    run_episode,
)
from env0_posttrain.agent.llm import register_provider
from env0_posttrain.agent.providers.base import Env0Provider, fill_response
from env0_posttrain.agent.records import Episode
from env0_posttrain_tests.support.agent import NotesEnv, notes_task

FAST = AgentSettings(backoff_base_s=0.001, backoff_max_s=0.002)


def run(task, endpoint, settings=FAST, arm="teacher", trial=0, env=None, run_id="r") -> Episode:
    return asyncio.run(run_episode(task, endpoint, settings, arm, trial, run_id, env=env or NotesEnv()))


def run_many(tasks, endpoint, settings=FAST) -> list[Episode]:
    async def go():
        return [await run_episode(t, endpoint, settings, "teacher", 0, "r", env=NotesEnv()) for t in tasks]

    return asyncio.run(go())


class Scripted(Env0Provider):
    """Replies from a list of assistant dicts (the last one repeats); records what it was sent."""

    def __init__(self, replies):
        super().__init__()
        self.replies, self.requests = replies, []

    async def respond(self, model, messages, options, meta, model_response):
        self.requests.append((messages, options))
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        if isinstance(reply, Exception):
            raise reply
        return fill_response(model_response, model, reply, prompt_tokens=7, completion_tokens=3)


def scripted(replies, name="env0-scripted") -> Scripted:
    provider = Scripted(replies)
    register_provider(name, provider)
    return provider


def call(name, args):
    raw = args if isinstance(args, str) else json.dumps(args)
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": raw}}]}


def test_oracle_at_full_skill_solves_the_task_and_answers():
    task = notes_task(1, answer=True)
    ep = run(task, oracle_endpoint(skill=1.0))
    assert ep.stop_condition == "agent_completed" and ep.passed and ep.final_answer == "1"
    assert [m["role"] for m in ep.messages[:2]] == ["system", "user"]
    assert ep.messages[1]["content"] == task.instruction
    assert ep.n_tool_calls == len(task.oracle)
    assert [e.index for e in ep.exchanges] == list(range(len(task.oracle) + 1))
    # every exchange saw exactly the conversation before its reply
    for ex in ep.exchanges:
        assert ep.messages[ex.request_len] == ex.response
    tool_msgs = [m for m in ep.messages if m["role"] == "tool"]
    assert all(json.loads(m["content"])["ok"] for m in tool_msgs)
    assert {t["function"]["name"] for t in ep.tools} == set(task.tools)
    assert ep.usage.cost_usd == 0.0 and ep.agent_errors == ep.infra_errors == 0


def test_oracle_mistakes_are_seeded_and_mix_passes_with_failures():
    tasks = [notes_task(i) for i in range(30)]
    eps = run_many(tasks, oracle_endpoint(skill=0.6))
    again = run_many(tasks[:5], oracle_endpoint(skill=0.6))
    assert [e.messages for e in eps[:5]] == [e.messages for e in again]
    passed = sum(e.passed for e in eps)
    assert 0 < passed < len(eps)
    kinds = set().union(*(e.error_counts for e in eps))
    assert {"unknown_tool", "malformed_call"} <= kinds
    mistakes = {m for s in range(200) for m in plan_episode(tasks[0], 0.3, s).mistakes}
    assert mistakes == {"wrong_argument", "skipped_step", "unknown_tool", "premature_stop", "malformed_call"}
    other_trial = run(tasks[0], oracle_endpoint(skill=0.6), trial=1)
    assert other_trial.trial == 1


def test_malformed_and_unknown_calls_are_fed_back_not_crashes():
    scripted([call("notes_create", '{"title": "x"'), call("notes_explode", {}), call("notes_create", {"title": "note 1-a"}),
                    call("notes_create", {"title": "note 1-b"}), {"role": "assistant", "content": "all done"}])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"))
    assert ep.stop_condition == "agent_completed" and ep.passed
    assert ep.agent_errors == 2 and ep.error_counts == {"malformed_call": 1, "unknown_tool": 1}
    errors = [json.loads(m["content"]) for m in ep.messages if m["role"] == "tool"][:2]
    assert errors[0]["error"]["reason"] == "malformed_call" and "not valid JSON" in errors[0]["error"]["message"]
    assert errors[1]["error"]["reason"] == "unknown_tool" and "notes_list" in errors[1]["error"]["message"]
    # tool messages answer the call they belong to
    for m in ep.messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] == "c"
    assert ep.usage.prompt_tokens == 7 * len(ep.exchanges)


def test_repeated_agent_errors_stop_the_episode_and_it_is_still_scored():
    scripted([call("nope", {})])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"), AgentSettings(max_consecutive_agent_errors=2))
    assert ep.stop_condition == "agent_error" and ep.agent_errors == 2 and ep.verifier is not None
    assert ep.reward == 0.0


def test_empty_reply_gets_a_nudge():
    bot = scripted([{"role": "assistant", "content": ""}, {"role": "assistant", "content": "ok"}])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"))
    assert ep.error_counts == {"empty_reply": 1} and ep.stop_condition == "agent_completed"
    assert bot.requests[1][0][-1]["role"] == "user" and "empty" in bot.requests[1][0][-1]["content"]


def test_max_steps():
    scripted([call("notes_list", {})])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"), AgentSettings(max_steps=4))
    assert ep.stop_condition == "max_steps" and len(ep.exchanges) == 4 and ep.verifier is not None


def test_the_same_call_n_turns_in_a_row_stops_the_episode_as_stuck_and_says_which():
    provider = scripted([call("notes_list", {})])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"), AgentSettings(max_steps=12, stuck_after=3))
    assert ep.stop_condition == "stuck" and len(provider.requests) == 3 and ep.n_tool_calls == 3
    assert "notes_list" in ep.error and "3 turns in a row" in ep.error
    assert ep.verifier is not None  # scored like any episode the agent did not finish
    assert ep.messages[-1]["role"] == "tool"  # the third call ran: the trajectory stays whole


def test_arguments_are_compared_as_json_and_a_different_call_restarts_the_count():
    same = [call("notes_create", '{"title": "a", "body": "b"}'), call("notes_create", '{"body":"b","title":"a"}')]
    other = call("notes_create", {"title": "other"})
    scripted([*same, other, *same, other], name="env0-scripted")
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"), AgentSettings(max_steps=6, stuck_after=3))
    assert ep.stop_condition == "max_steps" and ep.n_tool_calls == 6
    scripted([*same, call("notes_create", {"body": "b", "title": "a"})])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"), AgentSettings(max_steps=6, stuck_after=3))
    assert ep.stop_condition == "stuck" and ep.n_tool_calls == 3


def test_without_stuck_after_a_repeating_model_runs_to_the_step_limit():
    scripted([call("notes_list", {})])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"), AgentSettings(max_steps=5, stuck_after=None))
    assert ep.stop_condition == "max_steps" and ep.n_tool_calls == 5


def test_verifier_error_keeps_the_trajectory():
    ep = run(notes_task(1), oracle_endpoint(), env=NotesEnv(fail_verify=True))
    assert ep.stop_condition == "verifier_error" and "verifier exploded" in ep.error
    assert ep.verifier is None and ep.n_tool_calls == 2


def test_steering_prompt_is_teacher_only_and_recorded():
    settings = AgentSettings(steering_prompt="Always list notes first.")
    ep = run(notes_task(1), oracle_endpoint(), settings)
    assert ep.steering_prompt == "Always list notes first."
    assert ep.messages[0]["content"].endswith("\n\nAlways list notes first.")
    with pytest.raises(ValueError, match="teacher-only"):
        run(notes_task(1), oracle_endpoint(), settings, arm="sft")
    plain = run(notes_task(1), oracle_endpoint())
    assert ep.messages[1:] == plain.messages[1:] and plain.steering_prompt is None


def test_sampling_and_options_reach_the_model():
    bot = scripted([{"role": "assistant", "content": "done"}])
    endpoint = ModelEndpoint(model="env0-scripted/s", temperature=0.7, top_p=0.9, max_tokens=33, extra={"seed": 5})
    run(notes_task(1), endpoint)
    _, options = bot.requests[0]
    assert options["temperature"] == 0.7 and options["top_p"] == 0.9 and options["max_tokens"] == 33
    assert options["seed"] == 5 and len(options["tools"]) == 3


def test_infra_errors_are_retried_and_counted_apart():
    import litellm

    bot = scripted([litellm.RateLimitError("slow down", llm_provider="x", model="s"),
                    litellm.ServiceUnavailableError("503", llm_provider="x", model="s"),
                    {"role": "assistant", "content": "done"}])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"))
    assert ep.stop_condition == "agent_completed" and ep.infra_errors == 2 and ep.agent_errors == 0
    assert ep.error_counts == {"rate_limit": 1, "server_error": 1}
    assert ep.exchanges[0].attempts == 3 and len(bot.requests) == 3


def test_infra_errors_past_the_retry_budget_end_unscored():
    import litellm

    scripted([litellm.Timeout("t", llm_provider="x", model="s")])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"), AgentSettings(max_retries=2, backoff_base_s=0))
    assert ep.stop_condition == "infra_error" and ep.verifier is None
    assert ep.exchanges[-1].error_kind == "infra" and ep.exchanges[-1].attempts == 3 and ep.infra_errors == 3


def test_a_hung_model_times_out_as_infra():
    class Hang(Env0Provider):
        async def respond(self, model, messages, options, meta, model_response):
            await asyncio.sleep(10)

    register_provider("env0-hang", Hang())
    ep = run(notes_task(1), ModelEndpoint(model="env0-hang/h"),
             AgentSettings(request_timeout_s=0.05, max_retries=1, backoff_base_s=0))
    assert ep.stop_condition == "infra_error" and ep.error_counts == {"timeout": 2}


def test_bad_credentials_abort_instead_of_burning_retries():
    import litellm

    scripted([litellm.AuthenticationError("bad key", llm_provider="x", model="s")])
    with pytest.raises(FatalModelError, match="authentication"):
        run(notes_task(1), ModelEndpoint(model="env0-scripted/s"))


def test_context_window_ends_the_episode_as_agent_error():
    import litellm

    scripted([call("notes_list", {}), litellm.ContextWindowExceededError("too long", llm_provider="x", model="s")])
    ep = run(notes_task(1), ModelEndpoint(model="env0-scripted/s"))
    assert ep.stop_condition == "agent_error" and ep.error.startswith("context_window") and ep.verifier is not None


def test_missing_api_key_env_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("ENV0_TEST_KEY", raising=False)
    with pytest.raises(ValueError, match="ENV0_TEST_KEY"):
        ModelEndpoint(model="openai/gpt-4o-mini", api_key_env="ENV0_TEST_KEY").completion_kwargs()
    monkeypatch.setenv("ENV0_TEST_KEY", "sk-test")
    kw = ModelEndpoint(model="hosted_vllm/qwen", api_base="http://h:8000/v1", api_key_env="ENV0_TEST_KEY").completion_kwargs()
    assert kw["api_key"] == "sk-test" and kw["api_base"] == "http://h:8000/v1"


def test_an_env_that_forks_is_built_once_per_episode_and_the_start_state_stays_untouched():
    import copy

    from env0_posttrain_tests.support.agent import NotesWorkspace

    class ForkingNotes(NotesEnv):
        builds = forks = 0
        seen: list = []

        def build(self, task):
            ForkingNotes.builds += 1
            return super().build(task)

        def fork(self, ws):
            ForkingNotes.forks += 1
            return NotesWorkspace(copy.deepcopy(ws.notes))

        def verify(self, task, start, end, final_answer):
            ForkingNotes.seen.append((dict(start.notes), dict(end.notes)))
            return super().verify(task, start, end, final_answer)

    ep = run(notes_task(0), oracle_endpoint(), env=ForkingNotes())
    assert ep.passed and ForkingNotes.builds == 1 and ForkingNotes.forks == 1
    start, end = ForkingNotes.seen[0]
    assert start == {} and len(end) == 2  # the live copy took the writes, the start state did not

    class Counting(NotesEnv):
        builds = 0

        def build(self, task):
            Counting.builds += 1
            return super().build(task)

    assert run(notes_task(0), oracle_endpoint(), env=Counting()).passed and Counting.builds == 2
