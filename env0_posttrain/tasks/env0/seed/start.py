"""A package's seeded start: our seeded company (or env0's default fills, with an env0 checkout) plus the package's
needles, the needle manifest its scripts read, and what the server needs beyond rows. An imported task's start is
seeded once per (package hash, seed, clock) and forked for each episode."""

from __future__ import annotations

import threading
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from ....workspace.environment import Workspace
from ...model import Task
from ...task_paths import TaskPaths
from ..package.files import package_sha256
from ..package.load import Env0Error, Env0Package, load_package
from .env0_defaults import env0_imports
from .needles import seed_package

_SEEDING = threading.Lock()  # the cached starts are shared; builds run on the loop, verifiers in threads


class Start(NamedTuple):
    """A package's seeded start: the workspace, the needle manifest (/data), what the server needs beyond rows."""
    ws: Workspace
    manifest: dict[str, Any]
    extras: dict[str, Any]

def seeded_start(pkg: Env0Package, seed: int, now: datetime, env0_root: Path | None = None) -> Start:
    """Our seeded company (or env0's default fills with an env0 checkout) + the package's needles."""
    ws = Workspace.seeded(seed, now)
    try:
        with env0_imports(env0_root):  # needles may import env0's service packages from the checkout
            mod = pkg.load_needles()
            manifest = seed_package(ws, mod, pkg.services, pkg.root.name, seed, env0_root=env0_root)
    except Env0Error:
        raise
    except Exception as e:  # noqa: BLE001 - a needle the seeder cannot read names the file
        raise Env0Error("seed needles", pkg.needles_path, f"{type(e).__name__}: {e}") from e
    extras = manifest.pop("_extras", {})
    return Start(ws, manifest, extras)

def package_of(task: Task, paths: TaskPaths) -> Env0Package:
    """The task's package, refusing one whose files changed since the task was imported (its oracle would be stale)."""
    items = task.recipe.items
    root = paths.package_dir(task)
    sha = package_sha256(root) if root.is_dir() else None
    if sha != items["sha256"]:
        raise Env0Error("check package", root, f"task {task.id} was imported from package hash {items['sha256'][:12]}, "
                        f"the folder now hashes to {sha[:12] if sha else '(missing)'}; import the task set again")
    return load_package(root)

@lru_cache(maxsize=64)
def _seeded(root: str, sha: str, seed: int, now: str, env0_root: Path | None) -> Start:
    return seeded_start(load_package(root), seed, datetime.fromisoformat(now), env0_root)

def seeded(pkg: Env0Package, sha: str, seed: int, now: str, env0_root: Path | None) -> Start:
    """(a fresh fork of the seeded workspace, the needle manifest, what the server needs beyond the rows);
    `env0_root`: the env0 checkout the needles and the default fills read (None: our own company only)."""
    with _SEEDING:  # the cached start is shared: seeded and forked one thread at a time
        ws, manifest, extras = _seeded(str(pkg.root), sha, seed, now, env0_root)
        return Start(ws.fork(), manifest, extras)

def task_start(task: Task, paths: TaskPaths) -> tuple[Env0Package, Start]:
    """The task's package and its seeded start."""
    pkg = package_of(task, paths)
    items = task.recipe.items
    return pkg, seeded(pkg, items["sha256"], task.recipe.seed, items["now"], paths.env0_root)
