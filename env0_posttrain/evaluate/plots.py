"""PNG figures for the report (matplotlib, Agg backend: no display on a server or in a Dagster run).

Each function writes one PNG atomically (tmp + rename) and returns its path, or None when it has
nothing to draw (no training metrics, no history yet), so the report simply leaves that figure out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from env0_posttrain.evaluate.history import TrendPoint  # noqa: E402
from env0_posttrain.evaluate.statistics import FlipTable, ProportionEstimate  # noqa: E402
from env0_posttrain.util.fsutil import atomic_target  # noqa: E402

ARM_LABELS = {"base": "base", "sft": "adapter", "teacher_eval": "teacher", "rl": "RL", "onpolicy": "on-policy"}
ARM_COLORS = {"base": "#7f7f7f", "sft": "#1f77b4", "teacher_eval": "#2ca02c", "rl": "#d62728", "onpolicy": "#ff7f0e"}


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_target(path) as tmp:
            fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def _pp(x: float) -> float:
    return 100.0 * x if math.isfinite(x) else 0.0


def plot_pass_rates(estimates: Mapping[str, ProportionEstimate], path: Path) -> Path:
    """Bars with the Wilson 95 % CI as whiskers and ±1 SE as the thick band."""
    arms = list(estimates)
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for i, arm in enumerate(arms):
        e = estimates[arm]
        rate = _pp(e.rate)
        ax.bar(i, rate, color=ARM_COLORS.get(arm, "#9467bd"), alpha=0.8, width=0.6)
        if e.n:
            ax.errorbar(i, rate, yerr=[[rate - _pp(e.ci_low)], [_pp(e.ci_high) - rate]], color="black", capsize=6, lw=1)
            ax.errorbar(i, rate, yerr=_pp(e.se), color="black", lw=4, alpha=0.5)
        ax.annotate(f"{e.successes}/{e.n}", (i, _pp(e.ci_high) if e.n else rate), textcoords="offset points",
                    xytext=(0, 4), ha="center", fontsize=9)
    ax.set_xticks(range(len(arms)), [ARM_LABELS.get(a, a) for a in arms])
    ax.set_ylabel("strict pass rate (%)")
    ax.set_title("Pass rate: Wilson 95% CI (whiskers), ±1 SE (band)", fontsize=10)
    ax.set_ylim(0, max([_pp(e.ci_high) for e in estimates.values() if e.n] + [10.0]) * 1.2)
    return _save(fig, path)


def plot_family_pass_rates(per_family: Mapping[str, Mapping[str, ProportionEstimate]], path: Path) -> Path:
    families = list(per_family)
    arms = [a for a in ARM_LABELS if any(a in per_family[f] for f in families)]
    width = 0.8 / max(len(arms), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(families)), 3.8))
    for j, arm in enumerate(arms):
        xs, ys, lo, hi = [], [], [], []
        for i, fam in enumerate(families):
            e = per_family[fam].get(arm)
            if e is None or not e.n:
                continue
            xs.append(i + (j - (len(arms) - 1) / 2) * width)
            ys.append(_pp(e.rate))
            lo.append(_pp(e.rate) - _pp(e.ci_low))
            hi.append(_pp(e.ci_high) - _pp(e.rate))
        ax.bar(xs, ys, width=width, label=ARM_LABELS[arm], color=ARM_COLORS[arm], alpha=0.8)
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="none", color="black", capsize=3, lw=0.8)
    ax.set_xticks(range(len(families)), families)
    ax.set_ylabel("strict pass rate (%)")
    ax.set_title("Pass rate per family (Wilson 95% CI)", fontsize=10)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_flip_table(flips: FlipTable, path: Path, labels: tuple[str, str] = ("base", "adapter")) -> Path:
    """2 x 2 task counts: the off-diagonal cells are the tasks the adapter changed."""
    grid = [[flips.both_pass, len(flips.pass_to_fail)], [len(flips.fail_to_pass), flips.both_fail]]
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    ax.imshow(grid, cmap="Blues")
    for r in range(2):
        for c in range(2):
            ax.text(c, r, str(grid[r][c]), ha="center", va="center", fontsize=14,
                    color="white" if grid[r][c] > max(map(max, grid)) / 2 else "black")
    ax.set_xticks([0, 1], [f"{labels[1]} pass", f"{labels[1]} fail"])
    ax.set_yticks([0, 1], [f"{labels[0]} pass", f"{labels[0]} fail"])
    ax.set_title(f"Tasks: {len(flips.fail_to_pass)} fail→pass, {len(flips.pass_to_fail)} pass→fail", fontsize=10)
    return _save(fig, path)


_CURVES = (("loss", "eval_loss"), ("learning_rate",), ("grad_norm",), ("gpu_util",), ("gpu_mem_gb",))


def plot_training_curves(metrics: Sequence[Mapping[str, Any]], path: Path) -> Path | None:
    """One panel per quantity the trainer logged; any key may be missing from any row."""
    panels = []
    for keys in _CURVES:
        series = {}
        for k in keys:
            pts = [(float(r["step"]), float(r[k])) for r in metrics
                   if r.get("step") is not None and isinstance(r.get(k), (int, float)) and math.isfinite(r[k])]
            if pts:
                series[k] = sorted(pts)
        if series:
            panels.append(series)
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.2), squeeze=False)
    for ax, series in zip(axes[0], panels, strict=True):
        for k, pts in series.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if len(pts) < 30 else None, ms=3, label=k)
        ax.set_xlabel("step")
        ax.legend(fontsize=8)
        if "learning_rate" in series:
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
    fig.suptitle("Training", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def plot_nightly_trend(points: Sequence[TrendPoint], path: Path) -> Path | None:
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for arm in sorted({p.arm for p in points}, key=lambda a: list(ARM_LABELS).index(a) if a in ARM_LABELS else 9):
        pts = sorted((p for p in points if p.arm == arm), key=lambda p: p.timestamp)
        xs, ys = [p.timestamp for p in pts], [_pp(p.pass_rate) for p in pts]
        ax.plot(xs, ys, marker="o", label=ARM_LABELS.get(arm, arm), color=ARM_COLORS.get(arm))
        band = [(p.timestamp, _pp(p.ci_low), _pp(p.ci_high)) for p in pts if p.ci_low is not None and p.ci_high is not None]
        if len(band) > 1:
            ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band],
                            color=ARM_COLORS.get(arm, "#9467bd"), alpha=0.15)
    ax.set_ylabel("strict pass rate (%)")
    ax.set_title("Nightly eval trend", fontsize=10)
    ax.legend(fontsize=8)
    fig.autofmt_xdate()
    return _save(fig, path)
