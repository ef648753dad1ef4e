"""Stand-ins for env0 service packages that no public env0 commit holds, importable under env0's own names.

env-0's Stripe seeders import `env_0_stripe`, which is env0-private. A service's env0 face names a folder of such
stand-ins (`stand_ins`, held in the service's own folder); each package there is importable under its own name.
`find_spec` is the import hook (env0_defaults' alias finder falls back to it).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

from .....workspace.services import registry


def packages() -> dict[str, Path]:
    """Every stand-in package by its top-level name: its folder."""
    return {p.name: p for s in registry.SERVICES if s.env0 and s.env0.stand_ins
            for p in sorted(s.env0.stand_ins.iterdir()) if (p / "__init__.py").is_file()}


def find_spec(fullname: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of a top-level stand-in package (its submodules then load through the package's __path__)."""
    folder = packages().get(fullname)
    if folder is None:
        return None
    init = folder / "__init__.py"
    return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(folder)])
