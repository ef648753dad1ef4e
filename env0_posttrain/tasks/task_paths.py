"""Where the files behind a run's tasks live, handed explicitly to whatever builds, judges or sandboxes a task.

Never kept in the process (a module global, the environment): one process runs stages of several runs (the
daemon's code server, a test session), and a worker process gets them in the job it is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TaskPaths:
    """`env0_root`: an env0 checkout (its seed packs and service packages back the needles and the default fills;
    None: our own seeded company only). `packages`: the folder env0 task recipes name their package against
    (the run's tasks.source, else its first packages suite). Built-in tasks need neither."""

    env0_root: Path | None = None
    packages: Path | None = None

    def __post_init__(self) -> None:
        for name in ("env0_root", "packages"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(value).expanduser().resolve())

    def package_dir(self, task: Any) -> Path:
        """The folder of an env0 task's package (its recipe names it relative to `packages`)."""
        if self.packages is None:
            raise RuntimeError(f"env0 task {task.id}: no package folder known; set the run spec's tasks.source "
                               "(or a packages suite's source)")
        return self.packages / task.recipe.items["package"]


NO_PATHS = TaskPaths()
