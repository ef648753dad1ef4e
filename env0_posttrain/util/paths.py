"""Where a checkout keeps its data: one root (ENV0_DATA_DIR, default ./data) for everything.

Paths recorded in the data (the store's tables, an adapter's config and card) are stored relative
to the root (`rel`) and resolved on read (`resolve`, `model_ref`), so a copied or moved data dir
works once ENV0_DATA_DIR points at it. Absolute paths outside the root are kept as they are.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Paths:
    root: Path

    @classmethod
    def from_env(cls, root: str | Path | None = None) -> "Paths":
        chosen = root or os.environ.get("ENV0_DATA_DIR") or Path.cwd() / "data"
        return cls(Path(chosen).resolve())

    @property
    def db(self) -> Path:
        return self.root / "env0.duckdb"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    def spec(self, run_id: str) -> Path:
        """A run's spec file: `runs/<run_id>.yaml`, the one thing every stage of the run reads first."""
        return self.runs / f"{run_id}.yaml"

    @property
    def models(self) -> Path:
        """Cache of locally built students, shared by every run."""
        return self.root / "models"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster_home"

    def artifacts(self, run_id: str) -> Path:
        return self.root / "artifacts" / run_id

    def rel(self, path: str | Path) -> str:
        """How a path is stored: relative to the root (POSIX form) when it lies under it, else unchanged."""
        p = Path(path)
        if not p.is_absolute():
            if not p.exists():
                return str(path)  # a hub id or a name, not a path here
            p = p.absolute()
        for candidate in (p, p.resolve()):
            if candidate.is_relative_to(self.root):
                return candidate.relative_to(self.root).as_posix()
        return str(path)

    def resolve(self, stored: str | Path) -> Path:
        """A stored path made usable: a relative one lies under today's root; an absolute one is kept."""
        p = Path(stored)
        return p if p.is_absolute() else self.root / p

    def model_ref(self, stored: str) -> str:
        """A stored model name: a path under the root when one exists there, else as given (a hub id, a path)."""
        if not Path(stored).is_absolute() and (self.root / stored).exists():
            return str(self.root / stored)
        return stored
