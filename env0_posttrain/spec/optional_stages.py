"""Which assets a spec's optional sections bring: a run whose spec lacks the section has none of them, so they are
left out of every run the project launches (the CLI, the nightly schedule, backfills, automation) instead of
materializing as no-ops that hold a pool slot.

One place to add a stage: a section name of `RunSpec` and the asset names that only exist with it. The assets are
named as strings so this module stays below `defs/` (test_layout's layers)."""

from __future__ import annotations

from collections.abc import Iterable

from env0_posttrain.spec.runspec import RunSpec

OPTIONAL_STAGES: dict[str, tuple[str, ...]] = {
    "rl": ("rl_adapter", "rl_eval_trajectories"),
    "onpolicy": ("onpolicy_adapter", "onpolicy_eval_trajectories"),
}


def optional_assets() -> frozenset[str]:
    return frozenset(a for names in OPTIONAL_STAGES.values() for a in names)


def section_of(asset: str) -> str | None:
    """The spec section an optional asset needs (None: the asset belongs to every run)."""
    return next((s for s, names in OPTIONAL_STAGES.items() if asset in names), None)


def absent_assets(spec: RunSpec) -> frozenset[str]:
    """The optional assets this spec does not have: their section is missing (None) or empty."""
    return frozenset(a for section, names in OPTIONAL_STAGES.items() if getattr(spec, section, None) is None
                     for a in names)


def applicable(assets: Iterable[str], spec: RunSpec) -> list[str]:
    """`assets` (keys as strings) without those the spec does not have, in order."""
    absent = absent_assets(spec)
    return [a for a in assets if a not in absent]


def not_applicable_reason(asset: str) -> str:
    return f"{asset} does not apply: the run spec has no {section_of(asset)} section"
