"""A run's env0 checkout and package folder travel as a value (TaskPaths) to whatever builds, judges or sandboxes
a task: reading them sets nothing in the process, and the next run in the same process (the daemon's code
server, `run materialize` of several runs) cannot inherit them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from env0_posttrain.util.process_env import export
from env0_posttrain.stages.context import task_paths
from env0_posttrain.spec.runspec import parse_spec
from env0_posttrain.tasks.task_paths import TaskPaths


def test_a_runs_paths_come_from_its_spec_alone_and_set_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ENV0_ROOT", raising=False)
    (tmp_path / "corpus").mkdir()
    with_root = parse_spec({"run_id": "a", "env0": {"root": str(tmp_path)},
                            "tasks": {"source": "corpus", "templates": None, "n_train": 1, "n_eval": 1}}, "a")
    before = dict(os.environ)
    paths = task_paths(with_root)
    assert paths == TaskPaths(env0_root=tmp_path.resolve(), packages=(tmp_path / "corpus").resolve())
    assert task_paths(parse_spec({"run_id": "b"}, "b")) == TaskPaths()  # the next run inherits nothing
    assert dict(os.environ) == before
    monkeypatch.setenv("ENV0_ROOT", str(tmp_path / "mine"))  # the user's own setting stands in for env0.root
    assert task_paths(parse_spec({"run_id": "b"}, "b")).env0_root == (tmp_path / "mine").resolve()


def test_an_env0_task_without_a_package_folder_is_a_named_error() -> None:
    from env0_posttrain.tasks import build_workspace
    from env0_posttrain.tasks.model import StateRecipe, Task

    task = Task(id="env0-x", family="mail", template_id="env0", difficulty=1, instruction="x", oracle=[],
                recipe=StateRecipe(seed=0, items={"package": "x", "sha256": "0", "now": "2025-01-01T00:00:00"}),
                tools=[])
    with pytest.raises(RuntimeError, match="env0 task env0-x: no package folder known; set the run spec's tasks.source"):
        build_workspace(task)


def test_the_users_own_setting_comes_back_and_one_set_by_someone_else_is_left_alone(monkeypatch) -> None:
    monkeypatch.setenv("X_ENV0_TEST", "users")
    export("X_ENV0_TEST", "run-a")
    export("X_ENV0_TEST", "run-b")
    assert os.environ["X_ENV0_TEST"] == "run-b"
    export("X_ENV0_TEST", None)
    assert os.environ["X_ENV0_TEST"] == "users"
    export("X_ENV0_TEST", "run-c")
    os.environ["X_ENV0_TEST"] = "changed-by-someone-else"
    export("X_ENV0_TEST", None)
    assert os.environ["X_ENV0_TEST"] == "changed-by-someone-else"
