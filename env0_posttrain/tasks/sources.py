"""Where a task comes from decides how it is played: one TaskSource per kind of task, looked up by template id.

Two kinds ship: the built-in templates (the seeded company with the task's items planted, judged by the
template's checks) and imported env0 packages (template id "env0": the package's needles on our company, judged
by its own tests/test.sh). A source owns how a task's start state is built, how its end state is judged, the
package it names, what the shell sandbox lays out for it and the oracle's way on the shell surface; callers ask
`source_of(task)` and never branch on a template id. Sources are stateless: a run's files arrive as `TaskPaths`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Protocol

from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.model import Task, VerifierResult
from env0_posttrain.tasks.task_paths import TaskPaths
from env0_posttrain.tasks.template import TEMPLATES, Template, params_key
from env0_posttrain.workspace import Workspace
from env0_posttrain.workspace.services import registry

SandboxParts = tuple[Path | None, dict[str, Any] | None, dict[str, Any] | None]


class TaskSource(Protocol):
    def build(self, task: Task, paths: TaskPaths) -> Workspace:
        """The task's start workspace (deterministic: two builds are equal)."""

    def verify(self, task: Task, start: Workspace, end: Workspace, final_answer: str | None,
               paths: TaskPaths) -> VerifierResult:
        """Judge the end state (and answer) against the start; the path taken is never looked at."""

    def package_name(self, task: Task) -> str | None:
        """The name of the package folder the task was imported from (None: made here)."""

    def sandbox_parts(self, task: Task, paths: TaskPaths) -> SandboxParts:
        """(package folder, needle manifest, surface extras) the shell sandbox lays out; Nones for none."""

    def shell_script(self, task: Task, paths: TaskPaths) -> dict[str, Any] | None:
        """The oracle's one `terminal` call on the shell surface (its arguments), or None: one command per oracle
        tool call."""


def plant_task(ws: Workspace, template: Template, params: dict[str, Any]) -> Workspace:
    """Plant a task's items after moving every service's id counter by an offset drawn from the params.

    Ids are deterministic in the counter, so without the offset the first planted message, file or
    event would carry the same id in every task, and a student could pass by memorising a constant
    instead of reading tool results. Same params, same offset: the build stays reproducible.
    """
    salt = int(params_key(params), 16)
    for service in registry.SERVICES:
        if service.planted_offset:
            db = ws.service(service.name).db
            db.seq += (salt >> (4 * len(service.name))) % 9973
    template.plant(ws, params)
    return ws


def template_of(task: Task) -> Template:
    try:
        return TEMPLATES[task.template_id]
    except KeyError:
        raise KeyError(f"task {task.id}: unknown template {task.template_id!r}") from None


class TemplateSource:
    """The built-in templates: the seeded company plus the task's planted items, judged by the template."""

    def build(self, task: Task, paths: TaskPaths) -> Workspace:
        ws = plant_task(Workspace.seeded(task.recipe.seed), template_of(task), task.recipe.items)
        ws.snapshot("seed")  # the task's start is the baseline: reset() returns here and diff() shows only the agent's work
        return ws

    def verify(self, task: Task, start: Workspace, end: Workspace, final_answer: str | None,
               paths: TaskPaths) -> VerifierResult:
        judge = Judge(start, end, final_answer)
        template_of(task).judge(judge, task.recipe.items)
        return judge.result()

    def package_name(self, task: Task) -> str | None:
        return None

    def sandbox_parts(self, task: Task, paths: TaskPaths) -> SandboxParts:
        return None, None, None

    def shell_script(self, task: Task, paths: TaskPaths) -> dict[str, Any] | None:
        return None


TEMPLATE_SOURCE = TemplateSource()


def _env0() -> TaskSource:
    from env0_posttrain.tasks.env0.corpus.source import ENV0_SOURCE  # env0's modules load on first use

    return ENV0_SOURCE


# template id -> the source of its tasks (a factory, so a source's modules load only when a task of it is played);
# a template id not listed here is a built-in template's
SOURCES: dict[str, Callable[[], TaskSource]] = {"env0": _env0}


def register_source(template_id: str, factory: Callable[[], TaskSource]) -> None:
    if template_id in SOURCES or template_id in TEMPLATES:
        raise ValueError(f"template id {template_id!r} already has a task source")
    SOURCES[template_id] = factory


def source_of(task: Task) -> TaskSource:
    factory = SOURCES.get(task.template_id)
    return factory() if factory is not None else TEMPLATE_SOURCE
