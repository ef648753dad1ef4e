"""Where a round's episodes can run, by `scale.backend.kind`: a new backend is its module (its player, with its
settings section as `settings`) plus one line in pyproject.toml's `[project.entry-points."env0_posttrain.rollout_backends"]`,
the registry the spec reads too (spec/plugins.py)."""

from __future__ import annotations

from env0_posttrain.spec import plugins

from .base import RolloutBackend


def backends() -> dict[str, RolloutBackend]:
    """kind -> the registered rollout backend."""
    return plugins.load(plugins.ROLLOUT_BACKENDS)


def backend_for(kind: str) -> RolloutBackend:
    """The backend registered under `kind`, or an error naming the ones there are."""
    registered = backends()
    try:
        return registered[kind]
    except KeyError:
        raise ValueError(f"scale.backend kind {kind!r} has no rollout backend ({plugins.ROLLOUT_BACKENDS}): "
                         f"{', '.join(sorted(registered))}") from None
