"""Tasks by id (and by instruction) for offline providers that must know the task they answer.

The harness registers a task before its episode calls an env0 provider, and passes the task id in
litellm's `metadata`; a caller outside the harness can be served by the instruction alone.
"""

from __future__ import annotations

import threading

from env0_posttrain.tasks.model import Task

_LOCK = threading.Lock()
_BY_ID: dict[str, Task] = {}
_BY_INSTRUCTION: dict[str, Task] = {}


def register(task: Task) -> None:
    with _LOCK:
        _BY_ID[task.id] = task
        _BY_INSTRUCTION[task.instruction.strip()] = task


def register_tasks(tasks: list[Task]) -> None:
    for t in tasks:
        register(t)


def lookup(task_id: str | None = None, instruction: str | None = None) -> Task:
    with _LOCK:
        if task_id is not None and task_id in _BY_ID:
            return _BY_ID[task_id]
        if instruction is not None and instruction.strip() in _BY_INSTRUCTION:
            return _BY_INSTRUCTION[instruction.strip()]
    raise KeyError(f"no registered task for id={task_id!r} / instruction={(instruction or '')[:80]!r}; "
                   "call env0_posttrain.agent.register_tasks(tasks) first")
