"""What the layers above the spec plug into it, named by Python entry points and loaded when a spec is validated.

The spec sits below every layer that knows what some of its fields may hold (LAYERS: spec imports only util/), yet
it must refuse a bad `scale.backend` or `tasks.families` when a file is parsed, naming the field. Entry points
(importlib.metadata, the packaging standard pytest plugins and console scripts use) invert that dependency without
an import: pyproject.toml's `[project.entry-points."<group>"]` table names each plug-in as `module:attribute`, one
line each, and the spec loads them by group when it validates, never when it is imported, so import order cannot
matter and no spec module names an upper layer's module. A distribution of its own can add a rollout backend the
same way, with no edit here.

Not a registry in spec/ that the backend modules fill when imported: a spec is parsed where nothing has imported
them (`run new`, the spec's own tests), and a kind would then be refused or accepted by accident of import order.

Where the lines are read: the installed distributions' metadata (written at install time), then this checkout's
pyproject.toml, which wins by name: an editable install that has not been reinstalled since a line was added still
sees it. `add` is one more line in-process (a backend defined in the test tree).
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

ROLLOUT_BACKENDS = "env0_posttrain.rollout_backends"  # kind -> the backend's player (its `settings` is the section)
TASK_FAMILIES = "env0_posttrain.task_families"  # `names` -> the tuple of family names (tasks/families/names.py)
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"  # present in a checkout, absent in a wheel

_added: dict[str, dict[str, str]] = {}


@cache
def installed(group: str) -> dict[str, str]:
    """name -> `module:attribute` of `group` as the installed distributions declare it."""
    return {ep.name: ep.value for ep in metadata.entry_points(group=group)}


@cache
def in_checkout(group: str, pyproject: Path = PYPROJECT) -> dict[str, str]:
    """name -> `module:attribute` of `group` in a checkout's pyproject.toml (none outside a checkout)."""
    if not pyproject.is_file():
        return {}
    table = tomllib.loads(pyproject.read_text()).get("project", {}).get("entry-points", {}).get(group, {})
    if not all(isinstance(v, str) for v in table.values()):
        raise ValueError(f"{pyproject}: [project.entry-points.{group!r}]: each value must be 'module:attribute'")
    return dict(table)


def add(group: str, name: str, value: str) -> None:
    """Register `name` -> `module:attribute` in `group` for this process (what a pyproject line does, in-process)."""
    _added.setdefault(group, {})[name] = value


def remove(group: str, name: str) -> None:
    _added.get(group, {}).pop(name, None)


def declared(group: str) -> dict[str, str]:
    """Every line of `group`: the installed metadata's, this checkout's over them, then those added in-process."""
    return {**installed(group), **in_checkout(group), **_added.get(group, {})}


@cache
def _resolve(value: str) -> Any:
    module, _, attribute = value.partition(":")
    obj: Any = import_module(module.strip())
    for part in attribute.strip().split(".") if attribute.strip() else ():
        obj = getattr(obj, part)
    return obj


def load(group: str) -> dict[str, Any]:
    """name -> the object each line of `group` names, imported on first use (an error names the group and line)."""
    out = {}
    for name, value in sorted(declared(group).items()):
        try:
            out[name] = _resolve(value)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"entry point {group}: {name} = {value!r} cannot be loaded: {err}") from err
    return out
