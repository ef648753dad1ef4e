"""The RL arm in the comparison report: RL vs base and RL vs SFT with the same paired statistics and flip
tables as the adapter's comparison, and the GRPO per-step curves (reward, KL, entropy, episode length).

Kept apart from report.py so a run with no `rl` arm produces exactly the report it did before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from env0_posttrain.evaluate.intervals import interval_text
from env0_posttrain.evaluate.statistics import FlipTable, PairedAnalysis, flip_table, paired_analysis
from env0_posttrain.util.fsutil import relative_to
from env0_posttrain.util.markdown_table import md_table

RL_PAIRS = (("base", "rl"), ("sft", "rl"))  # (a, b): the diff is b - a
RL_CURVES = (("reward",), ("reward_std",), ("kl",), ("entropy",), ("episode_model_calls",), ("completion_tokens",))


class RLComparison(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    a: str
    b: str
    paired: PairedAnalysis
    flips: FlipTable


def arm_comparisons(pairs: Sequence[tuple[str, str]], trials: Mapping[str, Any], alpha: float, n_boot: int,
                    seed: int) -> dict[str, RLComparison]:
    """'<b>_vs_<a>' for each (a, b) of `pairs` whose two arms were evaluated (the diff is b - a)."""
    out = {}
    for a, b in pairs:
        if a in trials and b in trials:
            out[f"{b}_vs_{a}"] = RLComparison(
                a=a, b=b, paired=paired_analysis(trials[a], trials[b], alpha=alpha, n_boot=n_boot, seed=seed),
                flips=flip_table(trials[a], trials[b]))
    return out


def rl_comparisons(trials: Mapping[str, Any], alpha: float, n_boot: int, seed: int) -> dict[str, RLComparison]:
    """'rl_vs_base' / 'rl_vs_sft' for whichever of those arms were evaluated."""
    return arm_comparisons(RL_PAIRS, trials, alpha, n_boot, seed)


def plot_rl_curves(metrics: Sequence[Mapping[str, Any]], path: Path) -> Path | None:
    """One panel per GRPO quantity logged per step; None when the run has no RL metrics."""
    from env0_posttrain.evaluate.plots import _save, plt

    panels = []
    for (key,) in RL_CURVES:
        pts = sorted((float(r["step"]), float(r[key])) for r in metrics
                     if r.get("step") is not None and isinstance(r.get(key), (int, float)) and math.isfinite(r[key]))
        if pts:
            panels.append((key, pts))
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.0), squeeze=False)
    for ax, (key, pts) in zip(axes[0], panels, strict=True):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if len(pts) < 30 else None, ms=3)
        ax.set_title(key, fontsize=9)
        ax.set_xlabel("step")
    fig.suptitle("GRPO (RL) per step", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def _pct(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{100 * x:+.1f}"


def rl_section(comparisons: Mapping[str, RLComparison], rl_metrics: Sequence[Mapping[str, Any]],
               plot_paths: Mapping[str, str], out_dir: Path) -> list[str]:
    """The report's RL section as Markdown blocks (none without an RL arm or GRPO metrics)."""
    if not comparisons and not rl_metrics:
        return []
    rows = []
    for name, c in comparisons.items():
        p = c.paired
        pv = p.p_primary
        rows.append([f"{c.b} vs {c.a}", p.n_tasks, f"{100 * p.mean_a:.1f}%", f"{100 * p.mean_b:.1f}%", _pct(p.diff),
                     interval_text(p.ci_low, p.ci_high, p.diff, p.n_tasks), "n/a" if pv is None else f"{pv:.4f}",
                     len(c.flips.fail_to_pass), len(c.flips.pass_to_fail)])
    blocks = ["## RL (GRPO after SFT)",
              md_table(["comparison", "tasks", "mean a", "mean b", "diff (pp)", "95% CI (pp)", "p", "fail→pass",
                        "pass→fail"], rows)]
    for name, c in comparisons.items():
        changed = [r for r in c.flips.rows if r.change in ("fail→pass", "pass→fail")]
        if changed:
            blocks += [f"Flips, {c.a} → {c.b}:",
                       md_table(["task", "change", f"{c.a} passes", f"{c.b} passes"],
                                [[r.task_id, r.change, f"{r.passes_a}/{r.trials_a}", f"{r.passes_b}/{r.trials_b}"]
                                 for r in changed], "llrr")]
    if rl_metrics:
        last = rl_metrics[-1]
        blocks.append(f"{len(rl_metrics)} logged GRPO steps; last: reward {last.get('reward', float('nan')):.3f}, "
                      f"reward std {last.get('reward_std', float('nan')):.3f}, KL {last.get('kl', float('nan')):.4f}.")
    if "rl_training" in plot_paths:
        blocks.append(f"![GRPO per step]({relative_to(plot_paths['rl_training'], out_dir)})")
    return blocks


def rl_numbers(comparisons: Mapping[str, RLComparison]) -> dict[str, Any]:
    """Flat metadata values, in the style of `report_metadata`'s `paired.*` keys."""
    out: dict[str, Any] = {}
    for name, c in comparisons.items():
        p = c.paired
        pv = p.p_primary
        out.update({f"{name}.diff_pp": round(100 * p.diff, 4), f"{name}.p_value": pv,
                    f"{name}.ci_low_pp": None if p.ci_low is None else round(100 * p.ci_low, 4),
                    f"{name}.ci_high_pp": None if p.ci_high is None else round(100 * p.ci_high, 4),
                    f"{name}.fail_to_pass": len(c.flips.fail_to_pass), f"{name}.pass_to_fail": len(c.flips.pass_to_fail)})
    return out
