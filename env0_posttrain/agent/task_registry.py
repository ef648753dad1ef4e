"""The tasks an offline provider answers for a caller outside the harness, found by the instruction alone.

The harness hands each episode's task to the providers in litellm's `metadata` (`env0.task`, in whatever process
plays the episode), so nothing is registered for it. A caller that sends only messages (an OpenAI-compatible stub
serving a test, a script calling litellm itself) serves the tasks it plays for the length of a
`with serve_tasks(tasks):` block: they are found while it is open and gone once it closes.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterable, Iterator

from env0_posttrain.tasks.model import Task

_LOCK = threading.Lock()
_OPEN: list[dict[str, Task]] = []  # one scope per open `serve_tasks` block (the innermost last)


@contextmanager
def serve_tasks(tasks: Iterable[Task]) -> Iterator[None]:
    """Make `tasks` findable by their instruction until the block ends (the server thread of a stub sees them)."""
    scope = {t.instruction.strip(): t for t in tasks}
    with _LOCK:
        _OPEN.append(scope)
    try:
        yield
    finally:
        with _LOCK:
            del _OPEN[next(i for i, s in enumerate(_OPEN) if s is scope)]


def lookup(meta: dict, instruction: str | None = None) -> Task:
    """The task of a provider call: the one the harness sent in the metadata, else the served one with this
    instruction."""
    task = meta.get("task")
    if isinstance(task, Task):
        return task
    key = (instruction or "").strip()
    with _LOCK:
        for scope in reversed(_OPEN):
            if key in scope:
                return scope[key]
    raise KeyError(f"no task for id={meta.get('task_id')!r} / instruction={key[:80]!r}: the harness passes it in the "
                   "call's metadata; another caller wraps its calls in `with env0_posttrain.agent.serve_tasks(tasks):`")
