"""Imported env0 packages as a task source (tasks/sources.py): the package's needles on our company, judged by the
package's own tests/test.sh, laid out in the shell sandbox as env0's container, played on the shell surface by its
solution/solve.sh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....workspace.environment import Workspace
from ...model import Task, VerifierResult
from ...task_paths import TaskPaths
from ..judge.verifier import verify_env0
from ..seed.start import package_of, task_start


class Env0Source:
    def build(self, task: Task, paths: TaskPaths) -> Workspace:
        return task_start(task, paths)[1].ws

    def verify(self, task: Task, start: Workspace, end: Workspace, final_answer: str | None,
               paths: TaskPaths) -> VerifierResult:
        return verify_env0(task, start, end, final_answer, paths)

    def package_name(self, task: Task) -> str | None:
        pkg = task.recipe.items.get("package")
        return Path(pkg).name if pkg else None

    def sandbox_parts(self, task: Task, paths: TaskPaths) -> tuple[Path | None, dict[str, Any] | None,
                                                                    dict[str, Any] | None]:
        pkg, (_, manifest, extras) = task_start(task, paths)
        return pkg.root, manifest, extras

    def shell_script(self, task: Task, paths: TaskPaths) -> dict[str, Any] | None:
        """solve.sh verbatim, with the package's own agent time limit (a long script, e.g. one gws call per message
        of a 3000-message inbox, outlasts a command's default limit)."""
        pkg = package_of(task, paths)
        return {"command": pkg.solve_sh.read_text(encoding="utf-8"), "timeout": pkg.agent_timeout_s}


ENV0_SOURCE = Env0Source()
