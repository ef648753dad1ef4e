"""Plant an env0 package's needles into our workspace and write the needle manifest its scripts read.

Each service's needle vocabulary is planted by its env0 face's planter (`workspace/services/<svc>/env0_needles.py`),
in the face's `plant_order`; this module runs them with the env0-checkout fills only the tasks layer can give
(`Fills`). Our own seeded company is the default fill.
"""

from __future__ import annotations

import random
from pathlib import Path
from types import ModuleType
from typing import Any

from ....workspace.environment import Workspace
from ....workspace.services import registry
from ....workspace.services.env0_planting import Planting, fill_config
from ..package.load import Env0Error, load_needles


class Fills:
    """The env0-checkout fills the service planters call (`Env0Fills`), imported when a package needs them."""

    def clear_my_mail(self, ws: Workspace) -> None:
        from .gmail_fill import clear_my_mail
        clear_my_mail(ws)

    def gmail_default(self, ws: Workspace, root: Path, conf: dict[str, Any], fixed: int, seed: int) -> None:
        from .gmail_fill import load_gmail_default
        load_gmail_default(ws, root, conf, fixed, seed)

    def slack_default(self, ws: Workspace, root: Path, conf: dict[str, Any], seed: int) -> Any:
        from .env0_defaults import load_slack_default
        return load_slack_default(ws, root, conf, seed)

    def stripe_scenario(self, ws: Workspace, package_root: Path, seed: int) -> Any:
        from .stripe import seed_stripe
        return seed_stripe(ws, package_root, seed)

    def auth_users(self, ws: Workspace, mod: ModuleType, extras: dict[str, Any]) -> None:
        from .auth import seed_auth
        seed_auth(ws, mod, extras)


def seed_package(ws: Workspace, mod: ModuleType, services: tuple[str, ...], task_name: str, seed: int,
                 env0_root: Path | None = None) -> dict:
    """Plant every declared service's needles; returns the manifest (gmail needles, as env0 records them), with what
    our rows cannot hold under "_extras" (the runner hands it to the server, not to the manifest file)."""
    planting = Planting(rng=random.Random(seed), seed=seed, services=services, env0_root=env0_root,
                        needles_path=Path(getattr(mod, "__file__", "data/needles.py")), load=load_needles,
                        error=Env0Error, fills=Fills())
    faces = [f for f in (registry.get(svc).env0 for svc in services) if f is not None]
    families = sum(1 for svc in set(services) if (face := registry.get(svc).env0) is None or face.fill_family)
    for face in faces:
        if face.fill and fill_config(mod, face.fill, families).get("target_count") == "fixed_only":
            _clear_fill(ws, face.fill_tables)
    planted: list[Any] = []
    for face in sorted(faces, key=lambda f: f.plant_order):  # stable: faces sharing a planter plant it once
        if face.plant is not None and face.plant not in planted:
            planted.append(face.plant)
            face.plant(ws, mod, planting)
    from .hooks import run_hooks
    run_hooks(ws, planting.package_root)
    ws.snapshot("seed")  # the planted needles are the baseline /_admin/diff compares against
    return {"task": task_name, "seed": seed, "seeded_at": ws.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "needles": planting.manifest, "_extras": planting.extras}


def _clear_fill(ws: Workspace, fill_tables: tuple[tuple[str, str], ...]) -> None:
    """`target_count: "fixed_only"`: the package wants its needles alone, without the default fill."""
    roots = {ws.drive.root_id(p.email) for p in ws.directory}
    for table in [getattr(ws.service(name).db, t) for name, t in fill_tables]:
        for key in [k for k in table if k not in roots]:
            del table[key]  # one by one: Table counts versions on delete, dict.clear would bypass the memo
