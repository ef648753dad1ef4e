"""The one-line headline: it may claim exactly what the paired test supports, and no more.

The minimum detectable effect is stated before the verdict, so "not significant" reads as
"this eval could not have seen an effect smaller than M pp", never as "SFT does nothing".
"""

from __future__ import annotations

import math
from typing import Literal

from env0_posttrain.evaluate.statistics import MinimumDetectableEffect, PairedAnalysis

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


def headline(
    paired: PairedAnalysis | None, mde: MinimumDetectableEffect | None, alpha: float, missing: list[str] | None = None
) -> tuple[Verdict, str]:
    if missing:
        return "insufficient_data", f"No base-vs-adapter verdict: the eval has no {' or '.join(missing)} episodes"
    verdict = decide(paired, alpha)
    assert paired is not None
    if verdict == "insufficient_data":
        return verdict, (
            f"Adapter {pp(paired.diff, True)} pp vs base on {paired.n_tasks} shared task(s): too few tasks for any verdict"
        )
    if identical_arms(paired):
        return verdict, (
            f"Adapter {pp(paired.diff, True)} pp vs base: both scored {pp(paired.mean_a)}% on every one of "
            f"{paired.n_tasks} tasks × {paired.trials_b} trials (no variance, no test applies) — no difference seen"
        )
    test = ("exact McNemar" if paired.mcnemar is not None
            else "exact sign test over tasks" if paired.no_variance else "paired t over tasks")
    level = round(100 * (1 - alpha))
    direction = "over" if paired.diff >= 0 else "vs"
    mde_text = f"MDE at {round(100 * mde.power)}% power = {pp(mde.headline_mde)} pp" if mde else "MDE n/a"
    body = (
        f"Adapter {pp(paired.diff, True)} pp {direction} base ({paired.n_tasks} tasks × {paired.trials_b} trials, "
        f"paired {level}% CI [{pp(paired.ci_low, True)}, {pp(paired.ci_high, True)}] pp, p {p_text(paired.p_primary)}, "
        f"{test}; {mde_text})"
    )
    tail = {
        "significant_improvement": f"significant at α = {alpha:g}",
        "significant_regression": f"significantly worse at α = {alpha:g}",
        "not_significant": "not significant at this size",
    }[verdict]
    return verdict, f"{body} — {tail}"
