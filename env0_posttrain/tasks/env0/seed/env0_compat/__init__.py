"""Stand-ins for env0 service packages that no public env0 commit holds, importable under env0's own names.

env-0's Stripe seeders (`data/stripe_seed.py`) import `env_0_stripe` (its models, test cards, ids, serializers
and the default scenario's helpers); that package is env0-private. `env_0_stripe` here offers what the seeders
call, built on our Stripe rows: its models are plain objects a seeder fills and mutates, and seed/stripe.py
turns them into rows afterwards. `find_spec` is the import hook (env0_defaults' alias finder falls back to it).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

HERE = Path(__file__).parent
PACKAGES = ("env_0_stripe",)


def find_spec(fullname: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of a top-level stand-in package (its submodules then load through the package's __path__)."""
    if fullname not in PACKAGES:
        return None
    init = HERE / fullname / "__init__.py"
    return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(init.parent)])
