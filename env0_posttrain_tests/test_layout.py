"""The house rules DESIGN.md states, checked on the source: core packages never import Dagster, the
package has no import cycles, and no module grows past 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PKG = Path(__file__).resolve().parents[1] / "env0_posttrain"
DAGSTER_SIDE = ("defs", "orchestration", "definitions")  # the only places that may import dagster
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    out = {}
    for f in PKG.rglob("*.py"):
        parts = f.relative_to(PKG.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of this package that `path` imports (top level or inside functions), resolved to known modules."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found.update(n for n in names if n in known and n != name)
    return found


def test_core_packages_never_import_dagster():
    offenders = []
    for name, path in _modules().items():
        if name.split(".")[1:2] and name.split(".")[1] in DAGSTER_SIDE:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{name}: {m}" for m in mods if m == "dagster" or m.startswith("dagster.")]
    assert offenders == []


def test_no_import_cycles_between_modules():
    mods = _modules()
    graph = nx.DiGraph()
    for name, path in mods.items():
        for dep in _imports(name, path, set(mods)):
            if not name.startswith(dep + "."):  # a package's __init__ re-exporting its own modules is not a cycle
                graph.add_edge(name, dep)
    cycles = sorted(sorted(c) for c in nx.simple_cycles(graph))
    assert cycles == [], cycles[:5]


def test_no_module_over_400_lines():
    long = {name: n for name, path in _modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}
