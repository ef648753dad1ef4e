"""Task sources are plug-ins looked up by template id: the harness builds, judges, names and plays a task on the
shell surface through its source, never through a branch on the template id."""

from __future__ import annotations

import pytest

from env0_posttrain.agent.shell.oracle import terminal_calls
from env0_posttrain.agent.shell.sandbox import package_parts
from env0_posttrain.tasks import build_workspace, generate_tasks, verify
from env0_posttrain.tasks.model import StateRecipe, Task, VerifierResult
from env0_posttrain.tasks.sources import SOURCES, TEMPLATE_SOURCE, register_source, source_of
from env0_posttrain.tasks.suites import package_name
from env0_posttrain.tasks.task_paths import TaskPaths
from env0_posttrain.workspace import Workspace


class Fixed:
    """A source whose every answer is recognisable."""

    def build(self, task, paths):
        ws = Workspace.seeded(task.recipe.seed)
        ws.seen_paths = paths
        return ws

    def verify(self, task, start, end, final_answer, paths):
        return VerifierResult(reward=1.0 if final_answer == "ok" else 0.0, detail=f"fixed:{paths.packages}")

    def package_name(self, task):
        return "pkg-fixed"

    def sandbox_parts(self, task, paths):
        return paths.packages, {"manifest": 1}, None

    def shell_script(self, task, paths):
        return {"command": "echo fixed", "timeout": 7}


def _task(template_id: str) -> Task:
    return Task(id=f"{template_id}-1", family="mail", template_id=template_id, difficulty=1, instruction="x",
                recipe=StateRecipe(seed=0, items={}), oracle=[], tools=[])


def test_a_registered_source_builds_judges_names_and_plays_its_tasks(monkeypatch, tmp_path):
    monkeypatch.setitem(SOURCES, "fixed", Fixed)
    task, paths = _task("fixed"), TaskPaths(packages=tmp_path)
    ws = build_workspace(task, paths)
    assert ws.seen_paths == paths  # the run's paths reach the source
    assert verify(task, ws, ws, "ok", paths) == VerifierResult(reward=1.0, detail=f"fixed:{tmp_path.resolve()}")
    assert package_name(task) == "pkg-fixed"
    assert package_parts(task, paths) == (tmp_path.resolve(), {"manifest": 1}, None)
    assert terminal_calls(task, paths) == [{"command": "echo fixed", "timeout": 7}]


def test_built_in_and_env0_tasks_have_their_sources_and_a_template_id_has_one_source():
    builtin = generate_tasks(0, per_template=1)[0]
    assert source_of(builtin) is TEMPLATE_SOURCE and package_name(builtin) is None
    assert package_parts(builtin, TaskPaths()) == (None, None, None)
    assert [c["command"].startswith("curl ") for c in terminal_calls(builtin)] == [True] * len(builtin.oracle)
    assert type(source_of(_task("env0"))).__name__ == "Env0Source"
    for taken in ("env0", builtin.template_id):
        with pytest.raises(ValueError, match="already has a task source"):
            register_source(taken, Fixed)
    with pytest.raises(KeyError, match="unknown template 'nope'"):
        build_workspace(_task("nope"))
