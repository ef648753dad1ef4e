"""Where a round's episodes can run, by `scale.backend.kind`: a new backend is its module plus one line here (and its
settings in spec/scale.py's union)."""

from __future__ import annotations

from .base import RolloutBackend
from .processes import PROCESSES
from .ray import RAY

BACKENDS: dict[str, RolloutBackend] = {
    PROCESSES.name: PROCESSES,
    RAY.name: RAY,
}


def backend_for(kind: str) -> RolloutBackend:
    """The backend registered under `kind`, or an error naming the ones there are."""
    try:
        return BACKENDS[kind]
    except KeyError:
        raise ValueError(f"scale.backend kind {kind!r} has no rollout backend (agent/backends/): "
                         f"{', '.join(sorted(BACKENDS))}") from None
