"""The one resource every asset needs: where the data root is (hence the store and artifacts)."""

from __future__ import annotations

import dagster as dg

from env0_posttrain.util.paths import Paths
from env0_posttrain.store import Store


class Env0Resource(dg.ConfigurableResource):
    """`data_dir` empty means ENV0_DATA_DIR or ./data, so the UI and the CLI see the same store."""

    data_dir: str = ""

    def paths(self) -> Paths:
        return Paths.from_env(self.data_dir or None)

    def store(self) -> Store:
        return Store(self.paths().db)
