"""Seed our Stripe service the way env0's image does (`stripe --db /data/stripe.db seed --scenario ...`).

The scenario comes from the package's Dockerfile: `task:<name>` runs the package's `data/stripe_seed.py`
(`seed(db, rng, fake)`, importing env0's `env_0_stripe`, here our stand-in, which Stripe's env0 face names), `default` builds
stripe's default account. The seeder fills plain objects; each becomes the row of the same columns. `ENV
AUTH_ENABLED=1` puts the account behind the auth service (an access token instead of the API key).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import random
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ....workspace.environment import Workspace
from ....workspace.services import registry
from . import env0_compat
from ..package.load import Env0Error


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        return env0_compat.find_spec(fullname) if path is None else None


@contextmanager
def compat_imports() -> Iterator[None]:
    """`env_0_stripe` importable while a seeder runs; afterwards its modules leave sys.modules again."""
    finder = _Finder()
    sys.meta_path.append(finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        stand_ins = env0_compat.packages()
        for name in [n for n in sys.modules if n.split(".")[0] in stand_ins]:
            sys.modules.pop(name, None)


class SeedSession:
    """What a seeder's `db` is used for: `add` (and `add_all`, `flush`, `commit`, which change nothing here)."""

    def __init__(self) -> None:
        self.added: list[Any] = []

    def add(self, obj: Any) -> None:
        self.added.append(obj)

    def add_all(self, objs: Any) -> None:
        self.added.extend(objs)

    def flush(self) -> None:
        pass

    commit = flush


def scenario(package_root: Path) -> str:
    docker = package_root / "environment" / "Dockerfile"
    text = docker.read_text(encoding="utf-8") if docker.is_file() else ""
    m = re.search(r"stripe\s+--db\s+\S+\s+seed\s+--scenario\s+(\S+)", text)
    if m:
        return m.group(1)
    return "task:" + package_root.name if (package_root / "data" / "stripe_seed.py").is_file() else "default"


def auth_enabled(package_root: Path) -> bool:
    docker = package_root / "environment" / "Dockerfile"
    text = docker.read_text(encoding="utf-8") if docker.is_file() else ""
    return re.search(r"^\s*ENV\s+AUTH_ENABLED[= ]\s*\"?1\"?\s*$", text, re.M) is not None


def seed_stripe(ws: Workspace, package_root: Path, seed: int) -> dict[str, Any]:
    """Run the package's Stripe scenario into `ws.stripe`; returns what the seeder returned."""
    name = scenario(package_root)
    session = SeedSession()
    rng = random.Random(seed)
    with compat_imports():
        if name == "default":
            from env_0_stripe.seed.generator import seed_default  # type: ignore[import-not-found]
            summary = seed_default(session, rng, None)
        elif name.startswith("task:"):
            path = package_root / "data" / "stripe_seed.py"
            if not path.is_file():
                raise Env0Error("seed stripe", path, f"missing (the Dockerfile seeds scenario {name!r})")
            summary = _run_seeder(path, session, rng)
        else:
            raise Env0Error("seed stripe", package_root / "environment" / "Dockerfile",
                            f"unknown stripe scenario {name!r} (served: default, task:<name>)")
    _store(ws, session.added, path=package_root / "data" / "stripe_seed.py")
    ws.stripe.db.auth_required = auth_enabled(package_root)
    return summary if isinstance(summary, dict) else {}


def _run_seeder(path: Path, session: SeedSession, rng: random.Random) -> Any:
    spec = importlib.util.spec_from_file_location(f"_env0_stripe_seed_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        return mod.seed(session, rng, None)
    except Exception as e:  # noqa: BLE001 - the package's own code: named, not raised raw
        raise Env0Error("seed stripe", path, f"{type(e).__name__}: {e}") from e


def _store(ws: Workspace, objects: list[Any], path: Path) -> None:
    face = registry.get(ws.stripe.name).env0
    rows = face.seed_rows if face else {}
    for obj in objects:
        table = getattr(obj, "table", None)
        cls = rows.get(table or "")
        if cls is None:
            raise Env0Error("seed stripe", path, f"a seeded {type(obj).__name__} has no Stripe table here")
        cols = {k: v for k, v in obj.columns().items() if k in cls.model_fields and v is not None}
        try:
            row = cls(**cols)
        except Exception as e:  # noqa: BLE001 - pydantic names the column
            raise Env0Error("seed stripe", path, f"{type(obj).__name__} {cols.get('id')}: {e}".splitlines()[0]) from e
        getattr(ws.stripe.db, table)[row.id] = row
