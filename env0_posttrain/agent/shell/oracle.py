"""What the oracle teacher types on the shell surface.

An env0 package: its solution/solve.sh, verbatim, as ONE `terminal` command. Splitting it into one call per
line is unsound: the scripts keep state across lines (shell variables such as a label id read from one call's
output, `set -euo pipefail`) and embed multi-line `python3 -c` programs; none reads `$0`, so the script text runs
as a `bash -c` command exactly as `bash solve.sh` would run it.

A built-in task: each recorded oracle tool call as the equivalent HTTP request, one command per call: `gws` for
the Google services (the CLI env0's scripts use) and curl for Slack and the Admin API, at the URLs the sandbox's
environment names ($SLACK_URL, $WORKSPACE_URL). The workspace behind them answers both with the same handlers,
so the end state is the same.
"""

from __future__ import annotations

from typing import Any

from env0_posttrain.tasks.model import Task
from env0_posttrain.workspace.dialects import dialect
from env0_posttrain.workspace.dialects.base import shell_json
from env0_posttrain.workspace.services import registry
from env0_posttrain.tasks.task_paths import NO_PATHS, TaskPaths

GWS_SERVICES: set[str] = set()
# the environment variable naming each service's base URL inside the sandbox (env0's names)
URL_VARS: dict[str, str] = {}


def _refresh() -> None:
    GWS_SERVICES.clear()
    GWS_SERVICES.update(s.name for s in registry.SERVICES if s.env0 and s.env0.gws)
    URL_VARS.clear()
    URL_VARS.update({s.name: s.shell_url for s in registry.SERVICES if s.shell_url})


registry.watch(_refresh)


def command_for_call(name: str, arguments: dict[str, Any]) -> str:
    """One tool call as a shell command that makes the same API request."""
    from env0_posttrain.workspace.tools import TOOLS

    spec = TOOLS[name]
    if spec.service in GWS_SERVICES:
        params = {k: v for k, v in arguments.items() if k != "body"}
        cmd = f"gws {' '.join(spec.method_id.split('.'))}"
        if params:
            cmd += f" --params {shell_json(params)}"
        if "body" in arguments:
            cmd += f" --json {shell_json(arguments['body'])}"
        return cmd
    var = URL_VARS.get(spec.service)
    if var is None:
        raise ValueError(f"tool {name}: no shell form for service {spec.service!r}")
    return dialect(spec.service).curl(spec, arguments, f"${var}")


def shell_commands(task: Task, paths: TaskPaths = NO_PATHS) -> list[str]:
    """The oracle's terminal commands for `task`, in order."""
    return [c["command"] for c in terminal_calls(task, paths)]


def terminal_calls(task: Task, paths: TaskPaths = NO_PATHS) -> list[dict[str, Any]]:
    """The oracle's `terminal` arguments: the task source's one script (an env0 package's solve.sh, with its own
    time limit), else one command per oracle tool call."""
    from env0_posttrain.tasks.sources import source_of

    script = source_of(task).shell_script(task, paths)
    if script is not None:
        return [script]
    return [{"command": command_for_call(c.name, c.arguments)} for c in task.oracle]
