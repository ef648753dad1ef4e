"""The bench scripts are run by hand, never by the suite: a module they import that moved breaks them silently
(nothing else imports them, so a removed module would go unnoticed). Every project name they import must exist."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

from env0_posttrain_tests.support.paths import REPO

BENCH = REPO / "bench"


def _project_imports(path: Path) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "env0_posttrain":
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] == "env0_posttrain"]
    return out


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_project_name_a_bench_script_imports_exists(script: Path) -> None:
    missing = []
    for module, name in _project_imports(script):
        if importlib.util.find_spec(module) is None:
            missing.append(module)
            continue
        if name is not None and not hasattr(importlib.import_module(module), name) \
                and importlib.util.find_spec(f"{module}.{name}") is None:
            missing.append(f"{module}.{name}")
    assert not missing, f"{script.name} imports names that do not exist: {missing}"
