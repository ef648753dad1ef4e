"""The shell surface as a TaskEnv: `terminal` runs a command in the episode's sandbox, `finish` ends it (the loop).

One ShellEnv per episode (the loop makes it): it wraps the harness's environment, so the task's workspace, its
fork and its verifier are exactly the tools surface's; only the agent's way in differs. The sandbox starts on
the first command (an episode that never runs one costs nothing) and is closed, every process in it killed,
before the verifier reads the end state. With surface 'both' the API's function tools stay callable too.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain.tasks.model import Task, VerifierResult
from env0_posttrain.tasks.task_paths import NO_PATHS, TaskPaths

from .tools import SHELL_TOOLS, TERMINAL, parse_terminal, tools_for_surface

NO_PROCESS = "No command is running: each command ends within its own call, so there is nothing to send input to."
RESET_DONE = "Every command already starts in a clean shell; nothing to reset."


class ShellEnv:
    def __init__(self, inner: Any, surface: str, limits: ShellSpec, max_chars: int | None = None):
        self.inner, self.surface, self.limits, self.max_chars = inner, surface, limits, max_chars
        self.task: Task | None = None
        self.session: Any = None
        self.counts: Counter = Counter()
        self.paths: TaskPaths = getattr(inner, "paths", NO_PATHS)  # the sandbox lays out an env0 task's package

    # -- the TaskEnv protocol --------------------------------------------------------------------
    def build(self, task: Task) -> Any:
        self.task = task
        return self.inner.build(task)

    def fork(self, ws: Any) -> Any:
        fork = getattr(self.inner, "fork", None)
        return fork(ws) if fork is not None else self.inner.build(self.task)

    def state_diff(self, start: Any, end: Any) -> dict[str, Any] | None:
        """What the episode changed, as the inner environment records it (None where it cannot say)."""
        state_diff = getattr(self.inner, "state_diff", None)
        return state_diff(start, end) if state_diff is not None else None

    def tool_names(self) -> set[str]:
        return set(SHELL_TOOLS) | (self.inner.tool_names() if self.surface == "both" else set())

    def openai_tools(self, names: list[str]) -> list[dict[str, Any]]:
        return tools_for_surface(self.surface, self.inner.openai_tools(names) if self.surface == "both" else [])

    def call_tool(self, ws: Any, name: str, arguments: dict[str, Any]) -> Any:
        if name != TERMINAL:  # 'both': an API function tool
            return self.inner.call_tool(ws, name, arguments)
        args, problem = parse_terminal(arguments)
        if args is None:
            self.counts["malformed_call"] += 1
            return f"[error] {problem}"
        if args.is_input:
            return NO_PROCESS
        if not args.command.strip():
            return RESET_DONE if args.reset else "No command given: `command` is empty."
        timeout = min(args.timeout if args.timeout else self.limits.timeout_s, self.limits.max_timeout_s)
        if self.session is None:
            from .session import ShellSession

            self.session = ShellSession(self.task, ws, self.limits, self.max_chars, self.paths)
        outcome = self.session.run(args.command, timeout)
        self.counts.update(outcome.events)
        return outcome.text

    def verify(self, task: Task, start: Any, end: Any, final_answer: str | None) -> VerifierResult:
        return self.inner.verify(task, start, end, final_answer)

    def close(self) -> Counter:
        """End the sandbox (if one started); what confinement did during the episode, by kind."""
        if self.session is not None:
            if self.session.close():
                self.counts["sandbox_teardown_left"] += 1  # logged once, swept when the next sandbox is made
            self.session = None
        return self.counts
