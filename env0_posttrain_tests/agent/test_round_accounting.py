"""Every episode played is counted: stored + counted as failed = played, per rollout and per round, whichever backend
played it. A failure of the harness around an episode (its set-up, the loop between the agent's steps, the
sandbox's close, the verifier, the record, the trip out of a worker) is stored with where it failed and the
verifier's reward if it ran (else none: a fail), never dropped; a round's pass rate is over every episode."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
from env0_posttrain.agent.rollouts import RolloutSummary, UncountedEpisodes
from env0_posttrain.tasks.model import VerifierResult
from env0_posttrain_tests.support.agent import NotesEnv, notes_task

TASKS = [notes_task(i) for i in range(3)]
FAST = AgentSettings(concurrency=3, backoff_base_s=0.001, backoff_max_s=0.002, max_refills=0)


class CloseFails(NotesEnv):
    def close(self):
        raise RecursionError("maximum recursion depth exceeded while removing the sandbox")


class SetupFails(NotesEnv):
    """notes-1 cannot be built: an environment bug before the agent acts."""

    def build(self, task):
        if task.id == "notes-1":
            raise OSError("the task's package could not be read")
        return super().build(task)


class LoopFails(NotesEnv):
    """A tool of notes-1 raises (a bug of ours between the agent's steps)."""

    def call_tool(self, ws, name, arguments):
        if str(arguments.get("title", "")).startswith("note 1-"):
            raise KeyError("a bug in the tool")
        return super().call_tool(ws, name, arguments)


class DiffUnrecordable(NotesEnv):
    def state_diff(self, start, end):
        return {"notes": {"added": {object()}}}  # nothing JSON can hold


def play(env, tasks=TASKS, trials: int = 1, settings: AgentSettings = FAST) -> tuple[RolloutSummary, list]:
    eps: list = []
    summary = run_rollouts_sync(tasks, "teacher", trials, oracle_endpoint(skill=1.0), settings, "acct", set(),
                                eps.append, env=env, progress=False)
    n = len(tasks) * trials
    assert summary.played == n == summary.completed == len(eps) and summary.counted_failed == 0, summary
    assert len({e.key for e in eps}) == n
    return summary, {e.task_id: e for e in eps}


def test_a_sandbox_close_that_raises_keeps_the_episode_and_its_verdict():
    summary, eps = play(CloseFails())
    assert summary.passed == 3 and summary.harness_failures == {"sandbox_close_error": 3}
    for ep in eps.values():
        assert ep.stop_condition == "agent_completed" and ep.passed and ep.error_counts["sandbox_close_error"] == 1
        assert ep.error.startswith("sandbox close: RecursionError")


def test_a_set_up_that_fails_is_stored_as_an_environment_error_and_counts_as_a_fail():
    summary, eps = play(SetupFails(), trials=2)
    bad = [e for e in eps.values() if e.task_id == "notes-1"]
    assert summary.passed == 4 and summary.played == 6 and summary.stop_conditions == {"agent_completed": 4,
                                                                                        "environment_error": 2}
    assert summary.harness_failures == {"setup_error": 2} and sorted(summary.crashed) == [
        "notes-1:0: OSError: the task's package could not be read", "notes-1:1: OSError: the task's package could not be read"]
    assert all(e.verifier is None and e.reward == -1.0 and not e.passed and e.messages == [] for e in bad)
    assert bad[0].error == "set-up: OSError: the task's package could not be read"


def test_a_bug_between_the_agents_steps_keeps_what_the_agent_did_without_a_verdict():
    summary, eps = play(LoopFails())
    ep = eps["notes-1"]
    assert ep.stop_condition == "environment_error" and ep.verifier is None and ep.error_counts == {"loop_error": 1}
    assert ep.error == "agent loop: KeyError: 'a bug in the tool'" and ep.n_tool_calls >= 1  # the call that hit it
    assert summary.passed == 2 and summary.harness_failures == {"loop_error": 1}


def test_a_verifier_that_raises_is_a_stored_verifier_error():
    summary, eps = play(NotesEnv(fail_verify=True))
    assert summary.stop_conditions == {"verifier_error": 3} and summary.harness_failures == {"verifier_error": 3}
    assert all(e.error == "RuntimeError: verifier exploded" and e.verifier is None for e in eps.values())


def test_a_record_json_cannot_hold_is_kept_as_text_with_its_verdict():
    summary, eps = play(DiffUnrecordable())
    assert summary.passed == 3 and summary.harness_failures == {"recording_error": 3}
    for ep in eps.values():
        assert ep.passed and ep.error_counts == {"recording_error": 1} and "object object" in str(ep.workspace_diff)
        ep.model_dump_json()


@pytest.mark.parametrize("env", [SetupFails(), CloseFails(), LoopFails(), DiffUnrecordable()],
                         ids=["set-up", "close", "loop", "record"])
def test_worker_processes_deliver_the_same_counts(env):
    """The same failures in worker processes (the other backend behind run_sharded): counted in the parent alike."""
    here, _ = play(env, trials=2)
    there, _ = play(env, trials=2, settings=FAST.model_copy(update={"processes": 2, "concurrency": 4}))
    assert there.processes == 2
    for field in ("played", "completed", "passed", "stop_conditions", "harness_failures", "crashed"):
        a, b = getattr(there, field), getattr(here, field)
        assert (sorted(a) == sorted(b)) if isinstance(a, list) else a == b, field


def test_the_counts_are_checked():
    s = RolloutSummary(run_id="r", arm="base", model="m", planned=4, skipped=1, played=3, completed=2,
                       infra_failed=["t:2"])
    s.check_counts()  # 2 stored + 1 counted as failed = 3 played
    with pytest.raises(UncountedEpisodes, match="3 episodes played but 1 stored \\+ 1 counted as failed"):
        s.model_copy(update={"completed": 1}).check_counts()


def test_a_round_never_finishes_without_an_episode_it_planned():
    from env0_posttrain.stages.rounds import round_gap

    planned = {("a", 0), ("a", 1), ("b", 0)}
    s = RolloutSummary(run_id="r", arm="base", model="m", planned=3, skipped=0, played=3, completed=2,
                       infra_failed=["a:1"])
    assert round_gap(planned, {("a", 0), ("b", 0)}, s) == ["a:1"]  # counted as failed: a rerun plays it
    assert round_gap(planned, planned, s.model_copy(update={"infra_failed": []})) == []
    with pytest.raises(UncountedEpisodes, match="a:1"):
        round_gap(planned, {("a", 0), ("b", 0)}, s.model_copy(update={"infra_failed": []}))


# -- a whole round through the store: the case, a true 1 of 2 ---------------------------------------------
class OneCloseFailsOneFails:
    """The run's own environment, except that the second task's sandbox close raises and its verdict is a fail (as
    when an agent's command leaves a tree the close cannot walk); episodes run one at a time."""

    def __init__(self, inner: Any, victim: str):
        self.inner, self.victim, self.current = inner, victim, None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def build(self, task):
        self.current = task.id
        return self.inner.build(task)

    def close(self):
        if self.current == self.victim:
            raise RecursionError("maximum recursion depth exceeded")
        return {}

    def verify(self, task, start, end, final_answer):
        return VerifierResult(reward=0.0) if task.id == self.victim else self.inner.verify(task, start, end,
                                                                                            final_answer)


def test_a_round_whose_close_raised_for_one_episode_reports_one_of_two(tmp_path: Path, monkeypatch):
    from env0_posttrain.spec.runspec import parse_spec
    from env0_posttrain.stages import rounds
    from env0_posttrain.stages.context import StageContext, load_tasks
    from env0_posttrain.stages.task_set import build_task_set
    from env0_posttrain.store import Store
    from env0_posttrain.util.paths import Paths

    spec = parse_spec({"run_id": "acct", "tasks": {"families": ["calendar"], "n_train": 2, "n_eval": 2, "seed": 3}})
    paths = Paths(tmp_path)
    store = Store(paths.db)
    store.upsert_run(spec)
    ctx = StageContext(spec.run_id, spec, store, paths, logging.getLogger("test"))
    build_task_set(ctx)
    tasks = load_tasks(ctx, ("eval",))
    env = OneCloseFailsOneFails(ctx.task_env(), tasks[1].id)
    monkeypatch.setattr(StageContext, "task_env", lambda self: env)
    round_id, episodes, summary = rounds.rollout(ctx, "base", tasks, 1, oracle_endpoint(skill=1.0),
                                                 FAST.model_copy(update={"concurrency": 1}))
    meta = rounds.rollout_metadata(round_id, episodes, summary)
    assert meta["episodes"] == 2 and meta["strict_passes"] == 1 and meta["pass_rate"] == 0.5
    assert meta["harness_failures"] == {"sandbox_close_error": 1}
    assert summary["played"] == summary["completed"] == 2 and summary["infra_failed"] == []
    assert [r["status"] for r in store.rounds(spec.run_id, "base")] == ["finished"]
    assert {(e.task_id, e.trial) for e in store.load_episodes(round_id)} == {(t.id, 0) for t in tasks}


def test_the_reports_counts_add_up_and_say_how_episodes_ended():
    """The report's arm numbers over such a round: every episode is a row of the pass rate, those without a verdict
    are listed as unscored with where they failed, and the errors by kind count each way of failing."""
    from env0_posttrain.evaluate.metrics import arm_metrics

    _, eps = play(SetupFails())
    _, more = play(CloseFails())
    m = arm_metrics("base", [*eps.values(), *[e.model_copy(update={"trial": 1}) for e in more.values()]])
    assert (m.pass_rate.successes, m.pass_rate.n, m.n_rows) == (5, 6, 6)  # 2 + 3 passes over all 6 played
    assert [(u.task_id, u.reason) for u in m.unscored] == [
        ("notes-1", "environment_error: set-up: OSError: the task's package could not be read")]
    assert m.error_kinds["setup_error"] == 1 and m.error_kinds["sandbox_close_error"] == 3
