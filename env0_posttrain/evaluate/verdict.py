"""The verdict of adapter vs base: what the paired test supports (evaluate/headline.py words it), and the number
formats the report's sentences share."""

from __future__ import annotations

import math
from typing import Literal

from env0_posttrain.evaluate.statistics import PairedAnalysis

Verdict = Literal["significant_improvement", "significant_regression", "not_significant", "insufficient_data"]


def pp(x: float | None, signed: bool = False) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{100 * x:+.2f}" if signed else f"{100 * x:.2f}"


def p_text(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return "n/a"
    return "< 0.001" if p < 0.001 else f"= {p:.3f}" if p < 0.1 else f"= {p:.2f}"


def identical_arms(paired: PairedAnalysis | None) -> bool:
    """Both arms scored the same on every shared task: nothing to test, and nothing to claim."""
    return paired is not None and paired.n_tasks >= 2 and paired.no_variance and paired.diff == 0


def decide(paired: PairedAnalysis | None, alpha: float) -> Verdict:
    if identical_arms(paired):
        return "not_significant"
    if paired is None or paired.n_tasks < 2 or paired.p_primary is None:
        return "insufficient_data"
    if paired.p_primary < alpha:
        return "significant_improvement" if paired.diff > 0 else "significant_regression"
    return "not_significant"
