"""The rollout-backend seam: the spec and the agent read one registry (entry points, spec/plugins.py), and a backend
defined in the test tree only (inline_backend.py) parses in a spec and plays a round once it has its one line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
from env0_posttrain.agent.backends import backend_for, backends
from env0_posttrain.agent.backends.base import RolloutBackend, RoundRun
from env0_posttrain.spec import plugins
from env0_posttrain.spec.runspec import SpecError, parse_spec
from env0_posttrain.spec.scale import ScaleSpec, backend_settings
from env0_posttrain_tests.agent.backends import inline_backend
from env0_posttrain_tests.support.agent import NotesEnv, notes_task


@pytest.fixture
def inline() -> Iterator[inline_backend.InlineRollouts]:
    plugins.add(plugins.ROLLOUT_BACKENDS, "inline", "env0_posttrain_tests.agent.backends.inline_backend:INLINE")
    inline_backend.INLINE.given.clear()
    yield inline_backend.INLINE
    plugins.remove(plugins.ROLLOUT_BACKENDS, "inline")


def test_every_kind_the_spec_accepts_has_a_backend_of_that_name():
    assert set(backend_settings()) == set(backends()) == {"processes", "ray"}
    for kind, backend in backends().items():
        assert isinstance(backend, RolloutBackend) and backend.name == kind
        assert backend.settings is backend_settings()[kind]
        assert ScaleSpec(backend=kind).backend.kind == kind


def test_the_registry_is_this_checkouts_pyproject_without_the_installed_metadata(monkeypatch: pytest.MonkeyPatch):
    """An editable install made before the lines were added has none of them: the checkout's pyproject.toml is read."""
    monkeypatch.setattr(plugins, "installed", lambda group: {})
    assert plugins.declared(plugins.ROLLOUT_BACKENDS) == {
        "processes": "env0_posttrain.agent.backends.processes:PROCESSES", "ray": "env0_posttrain.agent.backends.ray:RAY"}
    assert set(backends()) == {"processes", "ray"}


def test_a_distribution_of_its_own_adds_a_backend_and_the_checkout_wins_by_name(monkeypatch: pytest.MonkeyPatch):
    line = "env0_posttrain_tests.agent.backends.inline_backend:INLINE"
    monkeypatch.setattr(plugins, "installed", lambda group: {"inline": line, "ray": "gone.module:RAY"})
    assert plugins.declared(plugins.ROLLOUT_BACKENDS)["ray"] == "env0_posttrain.agent.backends.ray:RAY"
    assert ScaleSpec(backend="inline").backend == inline_backend.InlineSettings()


def test_a_kind_without_a_backend_is_refused_by_name():
    with pytest.raises(ValueError, match="'k8s' has no rollout backend.*processes, ray"):
        backend_for("k8s")
    with pytest.raises(SpecError, match=r"(?s)spec\.yaml.*scale\.backend.*'k8s'.*'processes', 'ray'"):
        parse_spec({"run_id": "r", "scale": {"backend": "k8s"}}, source="spec.yaml")


def test_a_line_that_names_nothing_is_refused_naming_the_line():
    plugins.add(plugins.ROLLOUT_BACKENDS, "gone", "env0_posttrain_tests.agent.backends.no_such_module:GONE")
    try:
        with pytest.raises(ValueError, match="gone = 'env0_posttrain_tests.agent.backends.no_such_module:GONE'"):
            backends()
    finally:
        plugins.remove(plugins.ROLLOUT_BACKENDS, "gone")


def test_a_test_tree_backend_parses_in_a_spec_after_its_one_line(inline: inline_backend.InlineRollouts):
    spec = parse_spec({"run_id": "r", "scale": {"backend": {"kind": "inline", "order": "reversed"}}}, source="s.yaml")
    assert spec.scale.backend == inline_backend.InlineSettings(order="reversed")
    assert spec.model_dump(mode="json")["scale"]["backend"] == {"kind": "inline", "order": "reversed"}
    with pytest.raises(SpecError, match=r"(?s)s\.yaml.*scale\.backend\.inline\.order.*'given' or 'reversed'"):
        parse_spec({"run_id": "r", "scale": {"backend": {"kind": "inline", "order": "sideways"}}}, source="s.yaml")
    with pytest.raises(ValidationError, match="address"):
        ScaleSpec(backend={"kind": "inline", "address": "auto"})  # the Ray backend's field, not this one's
    schema = ScaleSpec.model_json_schema()
    assert {"InlineSettings", "RaySettings", "ProcessesSettings"} <= set(schema["$defs"])
    assert schema["$defs"]["InlineSettings"]["properties"]["order"]["enum"] == ["given", "reversed"]


def test_a_test_tree_backend_plays_a_round_after_its_one_line(inline: inline_backend.InlineRollouts):
    assert backend_for("inline") is inline
    scale = ScaleSpec(backend={"kind": "inline", "order": "reversed"})
    settings = AgentSettings(concurrency=2, scale=scale)
    tasks = [notes_task(i) for i in range(3)]
    stored: list[Any] = []
    summary = run_rollouts_sync(tasks, "teacher", 2, oracle_endpoint(skill=1.0), settings, "seam", {("notes-0", 1)},
                                stored.append, env=NotesEnv(), progress=False)
    [(jobs, run)] = inline.given
    assert sorted(jobs) == [("notes-0", 0), ("notes-1", 0), ("notes-1", 1), ("notes-2", 0), ("notes-2", 1)]
    assert jobs == sorted(jobs, reverse=True)  # its own setting reached its player
    assert set(run) == set(RoundRun.__annotations__) and run["settings"] is settings and run["run_id"] == "seam"
    assert summary.backend == "inline" and summary.processes == 1
    assert sorted(e.key[2:] for e in stored) == sorted(jobs)
    assert summary.completed == summary.played == 5 and summary.passed == 5
