"""The harness on the real workspace and task verifiers: the oracle teacher end to end."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from env0_posttrain.agent import AgentSettings, ModelEndpoint, oracle_endpoint, run_rollouts_sync
from env0_posttrain.spec.runspec import TeacherSpec


@pytest.fixture(scope="module")
def tasks():
    from env0_posttrain.tasks import generate_tasks

    return generate_tasks(0, per_template=1)


def test_oracle_teacher_passes_every_task_through_the_real_workspace(tasks):
    eps = []
    s = run_rollouts_sync(tasks, "teacher", 1, oracle_endpoint(skill=1.0), AgentSettings(max_steps=40, concurrency=16),
                          "ws-run", set(), eps.append, progress=False)
    assert s.completed == len(tasks) and s.passed == len(tasks), [(e.task_id, e.verifier) for e in eps if not e.passed]
    by_id = {t.id: t for t in tasks}
    for ep in eps:
        task = by_id[ep.task_id]
        assert ep.n_tool_calls == len(task.oracle)
        results = [json.loads(m["content"]) for m in ep.messages if m["role"] == "tool"]
        assert all(r["ok"] for r in results)
        if task.final_answer is not None:
            assert ep.final_answer == task.final_answer
        assert {t["function"]["name"] for t in ep.tools} == set(task.tools)


def test_teacher_spec_skill_mixes_passes_and_failures(tasks):
    endpoint = ModelEndpoint.from_teacher(TeacherSpec(skill=0.7), seed=3)
    assert endpoint.model == "env0-oracle/oracle" and endpoint.extra["env0_skill"] == 0.7
    s = run_rollouts_sync(tasks[:40], "teacher", 1, endpoint, AgentSettings(max_steps=40), "ws-run", set(), None,
                          progress=False)
    assert 0 < s.passed < 40 and s.unscored == 0
    assert s.agent_errors > 0


def test_faults_on_the_real_workspace_leave_no_unscored_rows(tasks):
    eps = []
    endpoint = ModelEndpoint(model="env0-faulty/env0-oracle/oracle", extra={"env0_fault_rate": 0.2})
    settings = AgentSettings(max_steps=40, backoff_base_s=0.001, backoff_max_s=0.01)
    s = run_rollouts_sync(tasks[:30], "teacher", 1, endpoint, settings, "ws-faults", set(), eps.append, progress=False)
    assert s.completed == 30 and s.unscored == 0 and s.passed == 30
    assert s.infra_errors > 0 and Counter(s.error_counts).total() == s.infra_errors + s.agent_errors


def test_the_loops_fork_of_the_start_state_equals_a_second_build(tasks):
    """run_episode builds a task's workspace once and forks the live copy: the fork must be a second build."""
    from env0_posttrain.agent import WorkspaceEnv
    from env0_posttrain.tasks.generator import play

    env = WorkspaceEnv()
    for task in tasks[::7]:
        start, built = env.build(task), env.build(task)
        forked = env.fork(start)
        assert forked is not start and forked.state_hash() == built.state_hash() == start.state_hash()
        assert forked.action_log == built.action_log and forked.snapshots() == built.snapshots()
        assert forked.now == built.now
        play(forked, task.oracle)
        play(built, task.oracle)
        assert forked.state_hash() == built.state_hash()
        assert forked.diff() == built.diff() and forked.action_log == built.action_log
        assert start.state_hash() == env.build(task).state_hash()  # the live copy's writes never reach the start
        assert env.verify(task, start, forked, task.final_answer) == env.verify(task, start, built, task.final_answer)
        assert env.verify(task, start, forked, task.final_answer).reward == 1.0
