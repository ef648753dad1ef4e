"""Where a checkout keeps its data: one root (ENV0_DATA_DIR, default ./data) for everything."""

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

    @property
    def models(self) -> Path:
        """Cache of locally built students, shared by every run."""
        return self.root / "models"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster_home"

    def artifacts(self, run_id: str) -> Path:
        return self.root / "artifacts" / run_id
