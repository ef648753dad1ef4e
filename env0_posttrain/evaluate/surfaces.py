"""Which arms a report may set side by side: those that acted through the same surface, unless the spec allows more."""

from __future__ import annotations

from collections.abc import Iterable


def arm_surfaces(episodes: Iterable, compare_across: bool) -> dict[str, str]:
    """Which surface each arm's episodes acted through; arms on different surfaces are not compared unless the
    spec asks for it (compare_across_surfaces), and one arm's round never mixes surfaces."""
    seen: dict[str, set[str]] = {}
    for e in episodes:
        seen.setdefault(e.arm, set()).add(e.surface)
    mixed = {arm: sorted(s) for arm, s in seen.items() if len(s) > 1}
    if mixed:
        raise ValueError(f"an arm's eval round holds episodes of several surfaces: {mixed}")
    out = {arm: next(iter(s)) for arm, s in seen.items()}
    if len(set(out.values())) > 1 and not compare_across:
        raise ValueError(f"the arms acted through different surfaces ({out}); the report compares them only when the "
                         "run spec sets compare_across_surfaces: true")
    return out
