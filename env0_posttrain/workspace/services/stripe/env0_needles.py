"""Plant an env0 package's Stripe account: the scenario its Dockerfile seeds, run by the tasks layer's seeder
(a package's own `data/stripe_seed.py` imports env0's Stripe package, here our stand-in)."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from ..env0_planting import Planting

if TYPE_CHECKING:
    from ...environment import Workspace


def plant(ws: Workspace, mod: ModuleType, p: Planting) -> None:
    p.fills.stripe_scenario(ws, p.package_root, p.seed)
