"""One episode's sandbox on the shell surface, and what a command's result looks like to the agent.

The sandbox (sandbox/box.py) gives env0's container layout and a private loopback with the services at
env0's ports; this layer adds what a command needs on top: its time limit and output cap, a limit on the
processes the sandbox may hold (a pids cgroup when the machine lets us make one), and a report of what
confinement did, both in the text the agent reads and as counts in the episode's error_counts.
"""

from __future__ import annotations

import re
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Callable

from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain.tasks.task_paths import NO_PATHS, TaskPaths

# Signs in a command's output that the sandbox refused something; each becomes a note and a count. (The sandbox's
# network namespace has only loopback: a connection elsewhere fails at once, with the client's own words.)
REFUSALS = (
    ("shell_network_refused", ("Network is unreachable", "Could not resolve host", "Name or service not known",
                               "Temporary failure in name resolution", "unable to resolve host"),
     "Only the sandbox's loopback is reachable: other addresses are refused."),
    ("shell_write_refused", ("Read-only file system",),
     "Writes outside the sandbox's writable folders are refused (read-only file system)."),
    ("shell_process_limit", ("Resource temporarily unavailable", "fork: retry"),
     "The sandbox's process limit refused new processes."),
)

# curl's "Failed to connect to 10.1.2.3 port 80 ...: Couldn't connect to server" names the address it tried
ELSEWHERE = re.compile(r"Failed to connect to (?!localhost\b|127\.|::1\b|\[::1\])\S+")


@dataclass
class ShellOutcome:
    text: str
    events: Counter = field(default_factory=Counter)


def render(result: Any, timeout: float, cap: int, pids_refused: int = 0) -> ShellOutcome:
    """The tool result the agent reads: the output, then one bracketed line per thing worth knowing."""
    out, err = result.stdout or "", result.stderr or ""
    body = out + ("\n" if out and err and not out.endswith("\n") else "") + err
    cut = result.truncated or len(body) > cap  # the sandbox caps each stream; the agent reads both together
    body = body[:cap]
    events: Counter = Counter()
    notes = []
    if result.timed_out:
        events["shell_timeout"] += 1
        notes.append(f"[The command was stopped after {timeout:g} s, its time limit; every process it started "
                     f"was killed. Set `timeout` for a longer one.]")
    if cut:
        events["shell_output_cut"] += 1
        notes.append(f"[Output cut at {cap} characters; page it with head, tail or grep.]")
    for kind, signs, note in REFUSALS:
        hit = any(s in body for s in signs) or (kind == "shell_process_limit" and pids_refused > 0) \
            or (kind == "shell_network_refused" and ELSEWHERE.search(body) is not None)
        if hit:
            events[kind] += 1
            notes.append(f"[{note}]")
    if not result.timed_out:
        notes.append(f"[Exit code {result.returncode}]")
    text = body.rstrip("\n")
    return ShellOutcome((text + "\n" if text else "") + "\n".join(notes), events)


# How an episode gets its sandbox: (task, workspace, limits, task paths) -> a context manager yielding an object
# with `run(argv, *, timeout, output_cap, env, cwd)`. Tests swap it; the default is the package sandbox.
SandboxFactory = Callable[[Any, Any, ShellSpec, TaskPaths], Any]


def default_factory(task: Any, ws: Any, limits: ShellSpec, paths: TaskPaths) -> Any:
    from .sandbox import open_task_sandbox

    return open_task_sandbox(task, ws, limits, paths)


FACTORY: list[SandboxFactory] = [default_factory]


class ShellSession:
    def __init__(self, task: Any, ws: Any, limits: ShellSpec, max_chars: int | None = None,
                 paths: TaskPaths = NO_PATHS):
        """`max_chars`: the loop's cap on a tool message; the output is cut below it so the notes stay readable.
        `paths`: where an env0 task's package is (its scripts and data are laid out in the sandbox)."""
        self.limits = limits
        self.cap = max(50, min(limits.output_cap, max_chars - 600)) if max_chars else limits.output_cap
        self.stack = ExitStack()
        try:
            self.sandbox = self.stack.enter_context(FACTORY[0](task, ws, limits, paths))
        except BaseException:
            self.stack.close()
            raise

    def run(self, command: str, timeout: float) -> ShellOutcome:
        before = self._pids_refused()
        result = self.sandbox.run(["bash", "-c", command], timeout=timeout, output_cap=self.cap)
        return render(result, timeout, self.cap, self._pids_refused() - before)

    def _pids_refused(self) -> int:
        probe = getattr(self.sandbox, "pids_refused", None)
        return probe() if callable(probe) else 0

    def close(self) -> list[str]:
        """End the sandbox; what its teardown could not remove (never raises: it is logged and swept later)."""
        self.stack.close()
        return list(getattr(getattr(self.sandbox, "sandbox", None), "teardown_problems", None) or [])
