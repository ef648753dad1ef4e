"""The shell surface's two tools, shaped as the OpenHands agent benchflow runs (its `openhands` agent pins
openhands-sdk / openhands-tools 1.28.1): `terminal` (command, is_input, timeout, reset, and the `summary` the
SDK adds to every tool) and `finish` (message, summary). Names and parameter schemas follow that release; the
descriptions are ours and say what this surface does, which differs in one way: every command starts a fresh
bash in the same sandbox (files and /tmp persist; the working directory, variables and background jobs do not).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Surface = Literal["tools", "shell", "both"]
SURFACES: tuple[str, ...] = ("tools", "shell", "both")
TERMINAL = "terminal"
FINISH = "finish"
SHELL_TOOLS = (TERMINAL, FINISH)

_SUMMARY = {"type": "string", "description": "Optional: about ten words on what this call does."}

TERMINAL_DESCRIPTION = (
    "Run one bash command in the task's sandbox and get back what it printed and its exit status.\n"
    "* The company's services answer on this machine's loopback: `gws <service> <resource> <method> "
    "--params JSON --json JSON` calls Google Workspace (gmail, calendar, drive, docs); Slack and the other "
    "services are plain HTTP (curl, python). Their base URLs are in the environment ($MOCK_GMAIL_URL, "
    "$MOCK_SLACK_URL, ...; $WORKSPACE_URL answers every API at its real path). Nothing beyond loopback is reachable.\n"
    "* Each call starts a fresh bash: files you write (e.g. under /tmp) stay, but `cd`, exported variables and "
    "background jobs do not carry over to the next call. Chain steps with `&&` or `;`, or write a script.\n"
    "* A command is stopped when it runs past its time limit (set `timeout` for a longer one, up to the "
    "sandbox's maximum) and its output is cut beyond a fixed size: page long output with head, tail or grep.\n"
    "* Nothing keeps running between calls, so `is_input` has no process to talk to, and `reset` only "
    "confirms that the next command starts clean."
)
SHELL_NOTE = ("You act through a bash terminal in a sandbox: `gws` (Google Workspace), curl and python are on PATH "
              "and the services' base URLs are in the environment. When the request is done, call `finish` with "
              "your final answer; if the request asks a question, the message must contain the answer.")
FINISH_DESCRIPTION = (
    "End the task. Call it once the request is done, or when you cannot go further. `message` is your final "
    "answer to the user: what you did and found, and the answer itself if the request asked a question."
)


def shell_tool_defs() -> list[dict[str, Any]]:
    """OpenAI function-tool definitions of `terminal` and `finish`."""
    terminal = {"type": "object", "properties": {
        "summary": _SUMMARY,
        "command": {"type": "string", "description": "The bash command to run (one call, one command line; "
                                                     "chain with && or ; or use a heredoc for several)."},
        "is_input": {"type": "boolean", "description": "True sends `command` as input to a running process "
                                                      "(none outlives its call here). Default false."},
        "timeout": {"type": "number", "minimum": 0, "description": "Optional: seconds this command may run "
                                                                   "before it is stopped (capped by the sandbox)."},
        "reset": {"type": "boolean", "description": "True starts the next command in a clean shell. Default false."},
    }, "required": ["command"]}
    finish = {"type": "object", "properties": {
        "summary": _SUMMARY,
        "message": {"type": "string", "description": "The final answer to the user."},
    }, "required": ["message"]}
    return [{"type": "function", "function": {"name": TERMINAL, "description": TERMINAL_DESCRIPTION,
                                              "parameters": terminal}},
            {"type": "function", "function": {"name": FINISH, "description": FINISH_DESCRIPTION,
                                              "parameters": finish}}]


class TerminalArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str
    is_input: bool = False
    timeout: float | None = Field(default=None, ge=0)
    reset: bool = False
    summary: str | None = None


class FinishArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str
    summary: str | None = None


def parse_terminal(args: dict[str, Any]) -> tuple[TerminalArgs | None, str]:
    """(arguments, "") or (None, the problem in one line, as the agent will read it)."""
    try:
        return TerminalArgs.model_validate(args), ""
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        return None, f"terminal: {where}: {first['msg']}"


def finish_message(args: dict[str, Any]) -> str | None:
    """The final answer of a `finish` call, or None when the call is malformed (then it does not end the task)."""
    try:
        return FinishArgs.model_validate(args).message
    except ValidationError:
        return None


def tools_for_surface(surface: str, api_tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools an episode offers: the API's function tools, the shell's two, or both."""
    if surface == "tools":
        return api_tools
    if surface == "shell":
        return shell_tool_defs()
    if surface == "both":
        return [*api_tools, *shell_tool_defs()]
    raise ValueError(f"unknown agent surface {surface!r}; known: {', '.join(SURFACES)}")
