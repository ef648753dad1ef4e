"""What a service's env0 planter (`Env0Face.plant`) is handed: one package's planting, shared by every service it
declares. Planters run in `plant_order`, the order env0's image seeds its mocks in, and gmail and calendar draw from
one `rng`, so that order is part of a seeded start. The env0-checkout fills (env0's default mail and Slack scenario,
a package's Stripe seeder, its auth users) import env0's code through the tasks layer's import machinery, which the
service folders sit below: the tasks layer hands them in as `fills`, with `load` and `error` for reading a checkout."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from ..environment import Workspace


Planter = Callable[["Workspace", ModuleType, "Planting"], None]


class Env0Fills(Protocol):
    """The tasks layer's env0-checkout fills, one per service that has one."""

    def clear_my_mail(self, ws: Workspace) -> None: ...

    def gmail_default(self, ws: Workspace, root: Path, conf: dict[str, Any], fixed: int, seed: int) -> None: ...

    def slack_default(self, ws: Workspace, root: Path, conf: dict[str, Any], seed: int) -> Any: ...

    def stripe_scenario(self, ws: Workspace, package_root: Path, seed: int) -> Any: ...

    def auth_users(self, ws: Workspace, mod: ModuleType, extras: dict[str, Any]) -> None: ...


@dataclass
class Planting:
    """`manifest`: the gmail needles as env0 records them; `extras`: what rows cannot hold, for the server."""

    rng: random.Random
    seed: int
    services: tuple[str, ...]
    env0_root: Path | None
    needles_path: Path
    load: Callable[[Path], ModuleType]
    error: Callable[[str, Path, str], Exception]
    fills: Env0Fills
    manifest: list[dict[str, Any]] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def package_root(self) -> Path:
        return self.needles_path.resolve().parent.parent


def fill_config(mod: ModuleType, fill: str | None, families: int) -> dict:
    """The service's own *_FILL_CONFIG, else FILL_CONFIG when the package seeds `families` <= 1 service families."""
    own = getattr(mod, fill, None) if fill else None
    if isinstance(own, dict):
        return own
    shared = getattr(mod, "FILL_CONFIG", None)
    return shared if isinstance(shared, dict) and families <= 1 else {}
