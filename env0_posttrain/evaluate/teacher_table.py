"""The teacher-bounded table: per teacher, how close its distilled student (SFT, and RL when present) gets.

Seed 002's conclusion, that a student distilled from a teacher is bounded by it, as numbers over the
runs a teacher backfill made from one source run: the teacher's pass rate on the eval tasks, the
students' pass rates, the student - teacher gap (paired over shared eval tasks, with its CI), and the
fraction of the tasks the teacher passes that the student passes too (a task counts as passed when at
least half its trials pass, as in the flip table).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate.intervals import interval_text
from env0_posttrain.evaluate.metrics import by_arm, task_trials
from env0_posttrain.evaluate.statistics import ProportionEstimate, flip_table, paired_analysis, proportion_estimate
from env0_posttrain.util.markdown_table import md_table

STUDENT_ARMS = ("sft", "rl", "onpolicy")


class StudentVsTeacher(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    arm: str
    pass_rate: ProportionEstimate
    gap: float  # student - teacher, per-task means, tasks weighted equally
    gap_ci_low: float | None
    gap_ci_high: float | None
    gap_p_value: float | None
    teacher_passes_kept: float | None  # of the tasks the teacher passes, the share the student passes too
    tasks: int


class TeacherRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    teacher: str
    teacher_pass_rate: ProportionEstimate
    students: list[StudentVsTeacher]


def teacher_row(run_id: str, teacher: str, episodes: Sequence[Episode], alpha: float = 0.05, n_boot: int = 2000,
                seed: int = 0) -> TeacherRow | None:
    """None when the run has no teacher_eval episodes (the teacher's side of the table is missing)."""
    groups = by_arm(episodes)
    if "teacher_eval" not in groups:
        return None
    t_eps = groups["teacher_eval"]
    t_trials = task_trials(t_eps)
    students = []
    for arm in STUDENT_ARMS:
        if arm not in groups:
            continue
        s_trials = task_trials(groups[arm])
        paired = paired_analysis(t_trials, s_trials, alpha=alpha, n_boot=n_boot, seed=seed)
        flips = flip_table(t_trials, s_trials)
        teacher_passed = flips.both_pass + len(flips.pass_to_fail)
        students.append(StudentVsTeacher(
            arm=arm, pass_rate=proportion_estimate(sum(e.passed for e in groups[arm]), len(groups[arm]), alpha),
            gap=paired.diff, gap_ci_low=paired.ci_low, gap_ci_high=paired.ci_high, gap_p_value=paired.p_primary,
            teacher_passes_kept=flips.both_pass / teacher_passed if teacher_passed else None, tasks=paired.n_tasks))
    return TeacherRow(run_id=run_id, teacher=teacher, students=students,
                      teacher_pass_rate=proportion_estimate(sum(e.passed for e in t_eps), len(t_eps), alpha))


def _pct(x: float | None, signed: bool = False) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def table_markdown(rows: Sequence[TeacherRow]) -> str:
    headers = ["teacher", "run", "teacher pass %", "student", "student pass %", "gap (pp)", "gap 95% CI (pp)",
               "teacher passes kept %"]
    out = []
    for r in rows:
        for s in r.students or [None]:
            if s is None:
                out.append([r.teacher, r.run_id, _pct(r.teacher_pass_rate.rate), "(none)", "", "", "", ""])
                continue
            out.append([r.teacher, r.run_id, _pct(r.teacher_pass_rate.rate), s.arm, _pct(s.pass_rate.rate),
                        _pct(s.gap, True), interval_text(s.gap_ci_low, s.gap_ci_high, s.gap, s.tasks),
                        _pct(s.teacher_passes_kept)])
    return md_table(headers, out, "llrlrrrr")


def plot_teacher_table(rows: Sequence[TeacherRow], path: Path) -> Path | None:
    """Grouped bars per teacher: teacher, SFT and RL pass rates with their Wilson intervals."""
    from env0_posttrain.evaluate.plots import ARM_COLORS, _save, plt

    if not rows:
        return None
    arms = ["teacher_eval", *[a for a in STUDENT_ARMS if any(s.arm == a for r in rows for s in r.students)]]
    width = 0.8 / len(arms)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(rows) + 2), 3.6))
    for j, arm in enumerate(arms):
        xs, ys, lo, hi = [], [], [], []
        for i, r in enumerate(rows):
            est: Mapping | ProportionEstimate | None = r.teacher_pass_rate if arm == "teacher_eval" else next(
                (s.pass_rate for s in r.students if s.arm == arm), None)
            if est is None:
                continue
            xs.append(i + (j - (len(arms) - 1) / 2) * width)
            ys.append(100 * est.rate)
            lo.append(100 * (est.rate - est.ci_low))
            hi.append(100 * (est.ci_high - est.rate))
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, color=ARM_COLORS.get(arm),
               label={"teacher_eval": "teacher", "sft": "SFT student", "rl": "RL student", "onpolicy": "on-policy student"}[arm])
    ax.set_xticks(range(len(rows)), [r.teacher.removeprefix("env0-faulty/") for r in rows], rotation=20, ha="right",
                  fontsize=8)
    ax.set_ylabel("strict pass rate on eval tasks (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    ax.set_title("Students are bounded by their teacher", fontsize=10)
    return _save(fig, path)
