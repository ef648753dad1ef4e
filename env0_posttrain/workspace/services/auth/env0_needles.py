"""Plant an env0 package's auth users, clients and sessions (its AUTH_* needles), after every other service's rows:
its grants name them."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from ..env0_planting import Planting

if TYPE_CHECKING:
    from ...environment import Workspace


def plant(ws: Workspace, mod: ModuleType, p: Planting) -> None:
    p.fills.auth_users(ws, mod, p.extras)
