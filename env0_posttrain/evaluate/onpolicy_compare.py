"""The on-policy arm in the comparison report: against base, SFT and the teacher ceiling with the same paired
statistics and flip tables as the other arms, the teacher-bounded table per family (how much of SFT's gap to the
teacher the on-policy step closes), and the rounds' own figures (teacher agreement, pass rate, rows, tokens).

Kept apart from report.py so a run with no `onpolicy` arm produces exactly the report it did before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from env0_posttrain.evaluate.rl_compare import RLComparison, arm_comparisons
from env0_posttrain.util.markdown_table import md_table

ARM = "onpolicy"
ONPOLICY_PAIRS = (("base", ARM), ("sft", ARM), ("teacher_eval", ARM))  # (a, b): the diff is b - a


def onpolicy_comparisons(trials: Mapping[str, Any], alpha: float, n_boot: int, seed: int) -> dict[str, RLComparison]:
    """'onpolicy_vs_base' / 'onpolicy_vs_sft' / 'onpolicy_vs_teacher_eval' for whichever arms were evaluated."""
    return arm_comparisons(ONPOLICY_PAIRS, trials, alpha, n_boot, seed)


def gap_closed(teacher: float | None, sft: float | None, onpolicy: float | None) -> float | None:
    """The share of SFT's gap to the teacher that the on-policy step closes (None where there is no gap)."""
    if teacher is None or sft is None or onpolicy is None or teacher <= sft:
        return None
    return (onpolicy - sft) / (teacher - sft)


def teacher_bounded_rows(per_family: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """Per family: the teacher's pass rate, SFT's, on-policy's, and the share of the gap closed."""
    def rate(m: Mapping[str, Any], arm: str) -> float | None:
        return m[arm].pass_rate.rate if arm in m else None

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}%"

    rows = []
    for family, m in per_family.items():
        t, s, o = rate(m, "teacher_eval"), rate(m, "sft"), rate(m, ARM)
        if o is None:
            continue
        closed = gap_closed(t, s, o)
        rows.append([family, pct(t), pct(s), pct(o), "n/a" if closed is None else f"{100 * closed:+.0f}%"])
    return rows


def _pct(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{100 * x:+.1f}"


def _num(x: Any, fmt: str) -> str:
    return "n/a" if not isinstance(x, (int, float)) or isinstance(x, bool) else format(x, fmt)


def onpolicy_section(comparisons: Mapping[str, RLComparison], per_family: Mapping[str, Mapping[str, Any]],
                     rounds: Sequence[Mapping[str, Any]]) -> list[str]:
    """The report's on-policy section as Markdown blocks (none without an on-policy arm or rounds)."""
    if not comparisons and not rounds:
        return []
    rows = []
    for c in comparisons.values():
        p = c.paired
        pv = p.p_primary
        rows.append([f"{c.b} vs {c.a}", p.n_tasks, f"{100 * p.mean_a:.1f}%", f"{100 * p.mean_b:.1f}%", _pct(p.diff),
                     f"{_pct(p.ci_low)} to {_pct(p.ci_high)}", "n/a" if pv is None else f"{pv:.4f}",
                     len(c.flips.fail_to_pass), len(c.flips.pass_to_fail)])
    blocks = ["## On-policy distillation (after SFT)"]
    if rows:
        blocks.append(md_table(["comparison", "tasks", "mean a", "mean b", "diff (pp)", "95% CI (pp)", "p",
                                "fail→pass", "pass→fail"], rows))
    bounded = teacher_bounded_rows(per_family)
    if bounded:
        blocks += ["Teacher-bounded, per family: the share of SFT's gap to the teacher that the on-policy step "
                   "closes (negative: it widened).",
                   md_table(["family", "teacher", "SFT", "on-policy", "gap closed"], bounded, "lrrrr")]
    for c in comparisons.values():
        if c.a == "teacher_eval":
            continue
        changed = [r for r in c.flips.rows if r.change in ("fail→pass", "pass→fail")]
        if changed:
            blocks += [f"Flips, {c.a} → {c.b}:",
                       md_table(["task", "change", f"{c.a} passes", f"{c.b} passes"],
                                [[r.task_id, r.change, f"{r.passes_a}/{r.trials_a}", f"{r.passes_b}/{r.trials_b}"]
                                 for r in changed], "llrr")]
    if rounds:
        blocks += ["Rounds (the student's own training episodes; agreement: its turn equals the teacher's):",
                   md_table(["round", "episodes", "pass rate", "teacher agreement", "teacher errors", "new rows",
                             "rows trained", "tokens trained", "steps"],
                            [[r.get("round"), r.get("episodes"), _num(r.get("pass_rate"), ".3f"),
                              _num(r.get("teacher_agreement"), ".3f"), r.get("teacher_errors", "n/a"),
                              r.get("rows_new", "n/a"), r.get("rows_trained", "n/a"), r.get("tokens_trained", "n/a"),
                              r.get("steps", "n/a")] for r in rounds], "rrrrrrrrr")]
    return blocks
