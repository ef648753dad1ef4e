"""The episode's sandbox: the task's workspace served on env0's surface, and the package sandbox around commands.

env0 packages get their own HTTP surface (the needles' invite triggers, env0's /_admin shapes) and their needle
manifest; built-in tasks get the same surface over the same HTTP app, without a package.
"""

from __future__ import annotations

from typing import Any

from env0_posttrain.runspec import ShellSpec


def surface_parts(task: Any, ws: Any) -> tuple[Any, dict[str, Any] | None, Any]:
    """(the ASGI surface over `ws`, the needle manifest or None, the env0 package or None)."""
    from env0_posttrain.tasks.env0.server import Env0Surface

    if task.template_id != "env0":
        return Env0Surface(ws), None, None
    from env0_posttrain.tasks.env0.verifier import package_of, seeded

    pkg = package_of(task)
    items = task.recipe.items
    _, manifest, extras = seeded(pkg, items["sha256"], task.recipe.seed, items["now"])
    return Env0Surface(ws, extras), manifest, pkg


def open_task_sandbox(task: Any, ws: Any, limits: ShellSpec) -> Any:
    raise NotImplementedError("the package sandbox (tasks/env0/sandbox.py) has not landed yet")
