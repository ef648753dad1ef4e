"""The task families' names, written once: a task's `family` (tasks/model.py) and the run spec's `tasks.families`
(through the `env0_posttrain.task_families` entry point in pyproject.toml, spec/plugins.py) both read them here.
Several equal a service's name (a family is named for the app it exercises); this folder is their home."""

from __future__ import annotations

from typing import Literal, get_args

Family = Literal["auth", "calendar", "docs", "drive", "mail", "multi-app"]
FAMILIES: tuple[str, ...] = get_args(Family)
