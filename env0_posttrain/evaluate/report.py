"""Build the base-vs-adapter comparison report from its inputs, and write it to disk atomically.

`build_report(ReportInputs, out_dir)` is the one entry point the stage calls, for runs with and without eval
suites; `report_metadata` turns the report into plain values (no Dagster import here) that the asset attaches as
metadata, and `trend_points` gives the rows the store keeps for the nightly trend.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate import plots
from env0_posttrain.evaluate.behaviours import behaviour_rates
from env0_posttrain.evaluate.first_action import first_action_by_family, first_action_eval
from env0_posttrain.evaluate.headline import headline
from env0_posttrain.evaluate.history import TrendPoint, parse_history
from env0_posttrain.evaluate.metrics import (
    arm_metrics,
    by_arm,
    check_eval_episodes,
    difficulty_key,
    eval_splits,
    family_key,
    metrics_by,
    split_key,
    task_trials,
)
from env0_posttrain.evaluate.render import render_html, render_markdown
from env0_posttrain.evaluate.report_model import (
    ComparisonReport,
    ReportInputs,
    ReportNumbers,
    SuiteNumbers,
    TrainingSummary,
    parse_ledger,
)
from env0_posttrain.evaluate.onpolicy_compare import onpolicy_comparisons
from env0_posttrain.evaluate.rl_compare import plot_rl_curves, rl_comparisons, rl_numbers
from env0_posttrain.evaluate.statistics import (
    flip_table,
    minimum_detectable_effect,
    paired_analysis,
    two_proportion_test,
)
from env0_posttrain.evaluate.verdict import decide
from env0_posttrain.tasks.model import Task
from env0_posttrain.util.fsutil import atomic_write_text, relative_to

REPORT_FILES = ("report.md", "report.html", "report.json")


def build_report(inputs: ReportInputs, out_dir: Path | str) -> ComparisonReport:
    """Everything from the episodes of arms base / sft / teacher_eval / rl; plots and report files land in out_dir."""
    out_dir, i = Path(out_dir), inputs
    tasks_by_id = _index_tasks(i.tasks)
    eps = check_eval_episodes(i.episodes, tasks_by_id)
    if not eps:
        raise ValueError("build_report: no eval episodes (arms base / sft / teacher_eval)")
    run_ids = sorted({e.run_id for e in eps})
    run_id = i.run_id or (run_ids[0] if len(run_ids) == 1 else "+".join(run_ids))
    created_at = i.created_at or datetime.now(timezone.utc)
    numbers = _numbers(eps, tasks_by_id, i.splits, i.training_metrics, i.alpha, i.power, i.n_boot, i.seed)
    missing = [a for a in ("base", "sft") if a not in numbers.arms]
    suites = i.suites.numbers if i.suites is not None else []
    verdict, line = headline(numbers.paired, numbers.mde, i.alpha, missing, suites)
    trials = {a: task_trials(g) for a, g in by_arm(eps).items()}
    rl = rl_comparisons(trials, i.alpha, i.n_boot, i.seed)
    onpolicy = onpolicy_comparisons(trials, i.alpha, i.n_boot, i.seed)
    numbers = numbers.model_copy(update={"verdict": verdict, "rl": rl, "onpolicy": onpolicy})
    current = [TrendPoint(timestamp=created_at, arm=a, pass_rate=m.pass_rate.rate, ci_low=m.pass_rate.ci_low,
                          ci_high=m.pass_rate.ci_high, run_id=run_id) for a, m in numbers.arms.items()]
    plot_paths = _plots(numbers, i.training_metrics, parse_history(i.history) + current, out_dir / "plots")
    rl_plot = plot_rl_curves(i.rl_training_metrics, out_dir / "plots" / "rl_training.png") if i.rl_training_metrics else None
    if rl_plot is not None:
        plot_paths["rl_training"] = str(rl_plot)
    report = ComparisonReport(run_id=run_id, created_at=created_at, headline=line, numbers=numbers,
                              ledger=parse_ledger(i.ledger), lineage=dict(i.lineage), markdown="", html="",
                              plot_paths=plot_paths, suites=suites)
    markdown = render_markdown(report, out_dir, suites=i.suites, explorer=i.explorer,
                               rl_training_metrics=i.rl_training_metrics, onpolicy_rounds=i.onpolicy_rounds)
    report = report.model_copy(update={
        "markdown": markdown, "html": render_html(markdown, out_dir, f"env0 comparison report: {run_id}", plot_paths)})
    return report.model_copy(update={"files": write_report(report, out_dir)})


def suite_numbers(name: str, episodes: Sequence[Episode], boundary: Mapping, trials: int, *, alpha: float = 0.05,
                  n_boot: int = 10_000, seed: int = 0, budget_notes: Sequence[str] = (),
                  rows_note: str | None = None) -> SuiteNumbers:
    """One eval suite's numbers: passes / rows per arm and adapter vs base, paired over its tasks."""
    groups = by_arm(episodes)
    passes = {arm: (sum(e.passed for e in g), len(g)) for arm, g in groups.items()}
    paired = None
    if "base" in groups and "sft" in groups:
        paired = paired_analysis(task_trials(groups["base"]), task_trials(groups["sft"]), alpha=alpha, n_boot=n_boot,
                                 seed=seed)
    return SuiteNumbers(name=name, boundary=dict(boundary), trials=trials, passes=passes, paired=paired,
                        verdict=decide(paired, alpha), budget_notes=list(budget_notes), rows_note=rows_note)


def _index_tasks(tasks: Iterable[Task]) -> dict[str, Task]:
    out: dict[str, Task] = {}
    for i, t in enumerate(tasks):
        if t.id in out:
            raise ValueError(f"task #{i}: field 'id' {t.id!r} appears twice in the task list")
        out[t.id] = t
    return out


def _numbers(
    eps: list[Episode], tasks_by_id: Mapping[str, Task], splits: Mapping[str, str] | None,
    training_metrics: Sequence[Mapping[str, Any]], alpha: float, power: float, n_boot: int, seed: int,
) -> ReportNumbers:
    groups = by_arm(eps)
    arms = {arm: arm_metrics(arm, g, alpha) for arm, g in groups.items()}
    trials = {arm: task_trials(g) for arm, g in groups.items()}
    unpaired = paired = teacher_paired = mde = flips = None
    if "base" in arms and "sft" in arms:
        b, s = arms["base"].pass_rate, arms["sft"].pass_rate
        unpaired = two_proportion_test(b.successes, b.n, s.successes, s.n, alpha)
        paired = paired_analysis(trials["base"], trials["sft"], alpha=alpha, n_boot=n_boot, seed=seed)
        mde = minimum_detectable_effect(b.rate, min(b.n, s.n), paired.se, alpha=alpha, power=power)
        flips = flip_table(trials["base"], trials["sft"])
    if "base" in arms and "teacher_eval" in arms:
        teacher_paired = paired_analysis(trials["base"], trials["teacher_eval"], alpha=alpha, n_boot=n_boot, seed=seed)
    labels = eval_splits(eps, splits)
    per_split, paired_by_split = {}, {}
    if len(labels) > 1:
        per_split = metrics_by(eps, split_key(splits or {}), alpha)
        for label in labels:
            part = by_arm(e for e in eps if (splits or {}).get(e.task_id, "unlabelled") == label)
            if "base" in part and "sft" in part:
                paired_by_split[label] = paired_analysis(task_trials(part["base"]), task_trials(part["sft"]),
                                                         alpha=alpha, n_boot=n_boot, seed=seed)
    return ReportNumbers(
        alpha=alpha, verdict="insufficient_data", arms=arms, unpaired=unpaired, paired=paired,
        teacher_paired=teacher_paired, mde=mde, flips=flips,
        per_family=metrics_by(eps, family_key(tasks_by_id), alpha),
        per_difficulty=metrics_by(eps, difficulty_key(tasks_by_id), alpha),
        per_split=per_split, paired_by_split=paired_by_split,
        first_action=first_action_eval(eps, tasks_by_id, alpha),
        first_action_by_family=first_action_by_family(eps, tasks_by_id),
        behaviours=behaviour_rates(eps, tasks_by_id),
        training=summarize_training(training_metrics),
        unscored=[u for m in arms.values() for u in m.unscored],
    )


def summarize_training(rows: Sequence[Mapping[str, Any]]) -> TrainingSummary:
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise ValueError(f"training metrics row {i}: expected a mapping, got {type(r).__name__}")

    def series(key: str) -> list[float]:
        return [float(r[key]) for r in rows if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]

    steps, loss, eval_loss, mem = series("step"), series("loss"), series("eval_loss"), series("gpu_mem_gb")
    return TrainingSummary(
        logged_rows=len(rows), last_step=int(max(steps)) if steps else None,
        final_loss=loss[-1] if loss else None, final_eval_loss=eval_loss[-1] if eval_loss else None,
        best_eval_loss=min(eval_loss) if eval_loss else None, max_gpu_mem_gb=max(mem) if mem else None,
    )


def _plots(numbers: ReportNumbers, training_metrics: Sequence[Mapping[str, Any]], trend: list[TrendPoint],
           plot_dir: Path) -> dict[str, str]:
    out: dict[str, Path | None] = {
        "pass_rate": plots.plot_pass_rates({a: m.pass_rate for a, m in numbers.arms.items()}, plot_dir / "pass_rate.png"),
        "per_family": plots.plot_family_pass_rates(
            {fam: {a: m.pass_rate for a, m in per.items()} for fam, per in numbers.per_family.items()},
            plot_dir / "per_family.png"),
        "flips": plots.plot_flip_table(numbers.flips, plot_dir / "flips.png") if numbers.flips else None,
        "training": plots.plot_training_curves(training_metrics, plot_dir / "training.png"),
        # a trend needs at least two nights; one point is just the pass-rate figure again
        "trend": plots.plot_nightly_trend(trend, plot_dir / "trend.png") if len({p.timestamp for p in trend}) > 1 else None,
    }
    return {k: str(v) for k, v in out.items() if v is not None}


def write_report(report: ComparisonReport, out_dir: Path | str) -> dict[str, str]:
    """Each file lands whole (tmp + rename); report.json goes last, so its presence means the set is complete."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: out_dir / name for name in REPORT_FILES}
    files = {name: str(p) for name, p in paths.items()}
    atomic_write_text(paths["report.md"], report.markdown)
    atomic_write_text(paths["report.html"], report.html)
    # report.json names its files and figures relative to its own folder, so the folder can move (or the data dir)
    local = {"files": {name: name for name in REPORT_FILES}, "plot_paths": {
        k: relative_to(v, out_dir) for k, v in report.plot_paths.items()}}
    stored = report.model_copy(update=local).model_dump_json(exclude={"html"}, indent=1)  # NaN -> null
    atomic_write_text(paths["report.json"], stored)
    return files


def trend_points(report: ComparisonReport) -> list[TrendPoint]:
    """The rows the store appends per materialization (never overwritten) for the nightly trend."""
    return [TrendPoint(timestamp=report.created_at, arm=a, pass_rate=m.pass_rate.rate, ci_low=m.pass_rate.ci_low,
                       ci_high=m.pass_rate.ci_high, run_id=report.run_id) for a, m in report.numbers.arms.items()]


def _plain(x: Any) -> Any:
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _pp(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(100 * x, 4)


def report_metadata(report: ComparisonReport) -> dict[str, Any]:
    """Plain values for Dagster metadata.

    {"headline": str, "verdict": str, "markdown": str (figures by relative path), "markdown_inline": str (figures
    as data: URIs), "numbers": {flat name: int | float | str | None}, "plots": {name: PNG path}, "files": {name: path}}
    """
    n = report.numbers
    numbers: dict[str, Any] = {}
    for arm, m in n.arms.items():
        e = m.pass_rate
        numbers.update({f"{arm}.passes": e.successes, f"{arm}.rows": e.n, f"{arm}.pass_rate_pct": _pp(e.rate),
                        f"{arm}.ci_low_pct": _pp(e.ci_low), f"{arm}.ci_high_pct": _pp(e.ci_high),
                        f"{arm}.se_pp": _pp(e.se), f"{arm}.rows_with_tool_calls": m.rows_with_tool_calls,
                        f"{arm}.unscored_rows": m.n_unscored, f"{arm}.mean_reward": _plain(m.mean_reward)})
    if n.paired is not None:
        p = n.paired
        numbers.update({"paired.diff_pp": _pp(p.diff), "paired.ci_low_pp": _pp(p.ci_low), "paired.ci_high_pp": _pp(p.ci_high),
                        "paired.boot_ci_low_pp": _pp(p.boot_ci_low), "paired.boot_ci_high_pp": _pp(p.boot_ci_high),
                        "paired.se_pp": _pp(p.se), "paired.p_value": _plain(p.p_primary), "paired.tasks": p.n_tasks,
                        "paired.test": "exact McNemar" if p.mcnemar else "paired t", "paired.ci_method": p.ci_method})
    if n.unpaired is not None:
        u = n.unpaired
        numbers.update({"unpaired.diff_pp": _pp(u.diff), "unpaired.p_value": _plain(u.p_value),
                        "unpaired.ci_low_pp": _pp(u.ci_low), "unpaired.ci_high_pp": _pp(u.ci_high)})
    if n.mde is not None:
        numbers.update({"mde_pp": _pp(n.mde.headline_mde), "design_mde_pp": _pp(n.mde.design_mde)})
    if n.flips is not None:
        numbers.update({"flips.fail_to_pass": len(n.flips.fail_to_pass), "flips.pass_to_fail": len(n.flips.pass_to_fail)})
    numbers.update(rl_numbers(n.rl))
    numbers.update(rl_numbers(n.onpolicy))  # the same flat keys: onpolicy_vs_sft.diff_pp, ...
    numbers["unscored_rows"] = len(n.unscored)
    numbers.update(suites_numbers(report.suites))
    return {"headline": report.headline, "verdict": n.verdict, "markdown": report.markdown,
            "markdown_inline": markdown_with_inline_images(report), "numbers": numbers,
            "plots": dict(report.plot_paths), "files": dict(report.files)}


def suites_numbers(suites: Sequence[SuiteNumbers]) -> dict[str, Any]:
    """Each suite's flat numbers (suite.<name>.*), beside the report's own."""
    out: dict[str, Any] = {}
    for s in suites:
        for arm, (k, n) in s.passes.items():
            out[f"suite.{s.name}.{arm}.passes"] = k
            out[f"suite.{s.name}.{arm}.rows"] = n
        if s.paired is not None:
            out[f"suite.{s.name}.paired.diff_pp"] = _pp(s.paired.diff)
            out[f"suite.{s.name}.paired.p_value"] = s.paired.p_primary
        out[f"suite.{s.name}.seen"] = s.seen
        out[f"suite.{s.name}.task_id_overlap"] = s.boundary.get("task_id_overlap")
    return out


def markdown_with_inline_images(report: ComparisonReport) -> str:
    """The Markdown with each figure as a data: URI, for viewers that cannot reach the report's folder (Dagster UI)."""
    text = report.markdown
    for path in map(Path, report.plot_paths.values()):
        if path.is_file():
            uri = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
            text = text.replace(f"]({path.parent.name}/{path.name})", f"]({uri})")
    return text
