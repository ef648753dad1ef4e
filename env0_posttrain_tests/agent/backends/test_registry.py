"""The rollout-backend seam: every kind the spec accepts has a backend, and a backend defined here, in the test tree
only, plays a round through `run_rollouts` once it has its registry line."""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal, get_args

import pytest

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
from env0_posttrain.agent.attempts import attempt_episode
from env0_posttrain.agent.backends import BACKENDS, backend_for
from env0_posttrain.agent.backends.base import Deliver, Job, RolloutBackend, RoundRun, ShardStats
from env0_posttrain.spec.scale import BackendSettings, ScaleSpec
from env0_posttrain.spec.section import Section
from env0_posttrain_tests.support.agent import NotesEnv, notes_task


def spec_kinds() -> set[str]:
    """The kinds `scale.backend`'s union holds (each member's `kind` literal)."""
    union = get_args(BackendSettings)[0]  # Annotated[<members> | ..., Discriminator]
    return {get_args(get_args(m)[0].model_fields["kind"].annotation)[0] for m in get_args(union)}


class InlineSettings(Section):
    kind: Literal["inline"] = "inline"


class InlineBackend:
    """Plays the round's jobs one after another on this event loop and says what it was given."""

    name: ClassVar[str] = "inline"

    def __init__(self) -> None:
        self.given: list[tuple[list[tuple[str, int]], RoundRun]] = []

    def leaves_process(self, settings: AgentSettings, jobs: int) -> bool:
        return jobs > 0

    async def play(self, todo: list[Job], run: RoundRun, deliver: Deliver) -> ShardStats:
        self.given.append(([(t.id, k) for t, k in todo], run))
        t0 = time.process_time()
        for task, trial in todo:
            outcome = await attempt_episode(task, trial, run["endpoint"], run["settings"], run["arm"], run["run_id"],
                                            run["env"])
            await deliver(task, trial, outcome)
        return ShardStats(processes=1, cpu_s=time.process_time() - t0)


def test_every_kind_the_spec_accepts_has_a_backend_of_that_name():
    assert spec_kinds() == set(BACKENDS) == {"processes", "ray"}
    for kind, backend in BACKENDS.items():
        assert isinstance(backend, RolloutBackend) and backend.name == kind
        assert ScaleSpec(backend=kind).backend.kind == kind


def test_a_kind_without_a_backend_is_refused_by_name():
    with pytest.raises(ValueError, match="'k8s' has no rollout backend.*processes, ray"):
        backend_for("k8s")


def test_a_backend_from_the_test_tree_plays_a_round_after_one_registry_line(monkeypatch: pytest.MonkeyPatch):
    backend = InlineBackend()
    assert isinstance(backend, RolloutBackend)
    monkeypatch.setitem(BACKENDS, backend.name, backend)  # the one registry line
    # its settings are not in the spec's union, so the section is built without validation here
    settings = AgentSettings(concurrency=2, scale=ScaleSpec.model_construct(backend=InlineSettings()))
    tasks = [notes_task(i) for i in range(3)]
    stored: list[Any] = []
    summary = run_rollouts_sync(tasks, "teacher", 2, oracle_endpoint(skill=1.0), settings, "seam", {("notes-0", 1)},
                                stored.append, env=NotesEnv(), progress=False)
    [(jobs, run)] = backend.given
    assert sorted(jobs) == [("notes-0", 0), ("notes-1", 0), ("notes-1", 1), ("notes-2", 0), ("notes-2", 1)]
    assert set(run) == set(RoundRun.__annotations__) and run["settings"] is settings and run["run_id"] == "seam"
    assert summary.backend == "inline" and summary.processes == 1
    assert sorted(e.key[2:] for e in stored) == sorted(jobs)
    assert summary.completed == summary.played == 5 and summary.passed == 5
