"""Named starting points for a run spec, one YAML file each in spec/presets/ (the reasons for their numbers are the
files' comments): `default` (the seeds' recipe), `demo` (offline, minutes), `demo-rl` (the demo plus GRPO),
`demo-onpolicy` (the demo plus on-policy distillation), and the
seeds' experiment on an env0 checkout (`seeds`: real models; `seeds-offline`: oracle teacher, tiny student).

A preset file is a run spec without its run_id, with two additions read here: `extends: NAME` starts from another
preset (this file's sections replace that one's whole), and a value written `${VAR}` is the environment variable
VAR when the spec is made (null when it is unset). `run new --preset` and the UI's new_run job both read them.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from typing import Any

import yaml

_ENV = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def _folder():
    return resources.files("env0_posttrain.spec") / "presets"


PRESETS: tuple[str, ...] = tuple(sorted(p.name.removesuffix(".yaml") for p in _folder().iterdir()
                                        if p.name.endswith(".yaml")))


def _expand(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v) for v in value]
    if isinstance(value, str) and (m := _ENV.match(value)):
        return os.environ.get(m.group(1)) or None
    return value


def _load(name: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; known: {list(PRESETS)}")
    if name in seen:
        raise ValueError(f"preset {name}: extends itself through {' -> '.join(seen)}")
    path = _folder() / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict) or "run_id" in data:
        raise ValueError(f"{path}: a preset is a mapping of run-spec sections without run_id")
    parent = data.pop("extends", None)
    return (_load(parent, (*seen, name)) if parent else {}) | data


def preset_data(name: str, run_id: str) -> dict[str, Any]:
    """The run spec data of preset `name` for `run_id` (not yet validated: overrides come first)."""
    return {"run_id": run_id} | _expand(_load(name))
