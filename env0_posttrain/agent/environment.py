"""What the loop needs from the world: build a task's workspace, run a tool, list tools, verify.

One small seam so the loop is written once against the workspace/tasks contracts and can be
exercised against another environment (an env0 task directory, a remote workspace) unchanged.
"""

from __future__ import annotations

from typing import Any, Protocol

from env0_posttrain.tasks.model import Task, VerifierResult
from env0_posttrain.tasks.task_paths import NO_PATHS, TaskPaths


class TaskEnv(Protocol):
    def build(self, task: Task) -> Any:
        """A fresh workspace in the task's initial state (deterministic: two builds are equal)."""

    # Optional: `fork(ws) -> Any`, an independent copy of a built workspace, equal to building it again
    # but cheaper. The loop keeps the start state for the verifier with it; without it, it builds twice.
    # Optional: `state_diff(start, end) -> dict`, what the episode changed; kept with the episode for readers.
    # Optional: `paths: TaskPaths`, where the tasks' files are (an env0 package's sandbox and shell oracle read it).

    def call_tool(self, ws: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """{"ok": True, "result": ...} or {"ok": False, "error": ...}."""

    def tool_names(self) -> set[str]:
        """Every tool name the environment knows (a call to another name is an unknown tool)."""

    def openai_tools(self, names: list[str]) -> list[dict[str, Any]]:
        """OpenAI function tool definitions for `names`."""

    def verify(self, task: Task, start: Any, end: Any, final_answer: str | None) -> VerifierResult:
        """Reward from the start and end states and the final answer."""


class WorkspaceEnv:
    """The built-in mock workspace and task verifiers (imported on first use); `paths` says where the run's env0
    packages and checkout are, and travels with the env to the worker processes."""

    def __init__(self, paths: TaskPaths = NO_PATHS):
        self.paths = paths

    def build(self, task: Task) -> Any:
        from env0_posttrain.tasks import build_workspace

        return build_workspace(task, self.paths)

    def fork(self, ws: Any) -> Any:
        """The workspace's copy-on-write fork: rows shared, tables, snapshots and clock its own."""
        return ws.fork()

    def state_diff(self, start: Any, end: Any) -> dict[str, Any]:
        from .state_diff import compact_diff

        return compact_diff(end.diff_from(start))

    def call_tool(self, ws: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from env0_posttrain.workspace import call_tool

        return call_tool(ws, name, arguments)

    def tool_names(self) -> set[str]:
        from env0_posttrain.workspace import TOOLS

        return set(TOOLS)

    def openai_tools(self, names: list[str]) -> list[dict[str, Any]]:
        from env0_posttrain.workspace import openai_tools

        return openai_tools(names)

    def verify(self, task: Task, start: Any, end: Any, final_answer: str | None) -> VerifierResult:
        from env0_posttrain.tasks import verify

        return verify(task, start, end, final_answer, self.paths)


DEFAULT_ENV = WorkspaceEnv()
