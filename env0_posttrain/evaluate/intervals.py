"""An interval of a paired difference as text: its bounds, or why there are none (never "n/a to n/a")."""

from __future__ import annotations

import math


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def interval_text(low: float | None, high: float | None, diff: float | None, n_tasks: int) -> str:
    """Bounds in percentage points (signed, one decimal), or the reason a paired interval does not exist."""
    if _finite(low) and _finite(high):
        return f"{100 * low:+.1f} to {100 * high:+.1f}"
    if n_tasks < 2:
        return f"none: {n_tasks} paired task{'' if n_tasks == 1 else 's'} (an interval needs 2)"
    if _finite(diff):
        return f"none: every task differs by {100 * diff:+.1f} (no variance to estimate one from)"
    return "none: no paired difference"
