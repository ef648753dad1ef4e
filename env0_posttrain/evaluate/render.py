"""Report rendering: Markdown (for Dagster metadata and the repo) and a self-contained HTML page.

The Markdown is a list of sections, each a list of blocks (a heading, a sentence, a table, a figure) in reading
order; a section with nothing to show is empty.

Every value from the data (task ids, an episode's error, a package's reason, lineage) enters the Markdown as text
(util.markdown_table.md_text / md_table), so it cannot become an image, a link or markup. The HTML is that
Markdown rendered by markdown-it (raw HTML disabled) with the report's own figures inlined as base64 PNGs, read
from the paths the report wrote; any other image is shown as its source text and nothing else is read.
"""

from __future__ import annotations

import base64
import html as html_lib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from env0_posttrain.evaluate.metrics import ArmMetrics
from env0_posttrain.evaluate.plots import ARM_LABELS
from env0_posttrain.evaluate.report_model import ComparisonReport, LedgerEntry, ReportNumbers, SuiteNumbers, SuitesView
from env0_posttrain.evaluate.onpolicy_compare import onpolicy_section
from env0_posttrain.evaluate.rl_compare import rl_section
from env0_posttrain.evaluate.statistics import PairedAnalysis
from env0_posttrain.evaluate.verdict import p_text, pp
from env0_posttrain.util.fsutil import relative_to
from env0_posttrain.util.markdown_table import Markdown, md_link, md_table, md_text
from env0_posttrain.tasks.ledger import dropped_text

FIGURE_TITLES = {
    "pass_rate": "Pass rate per arm",
    "per_family": "Pass rate per family",
    "flips": "Flip table",
    "training": "Training curves",
    "trend": "Nightly trend",
}


def _label(arm: str) -> str:
    return ARM_LABELS.get(arm, arm)


def _rate(m: ArmMetrics | None) -> str:
    if m is None or not m.n_rows:
        return "–"
    e = m.pass_rate
    return f"{e.successes}/{e.n} ({pp(e.rate)}%)"


def _paired_sentence(p: PairedAnalysis, who: str = "Adapter") -> str:
    if p.n_tasks < 2:
        return f"{who}: only {p.n_tasks} shared task(s); no paired test."
    if p.no_variance and p.diff == 0:
        return (f"{who} {pp(p.diff, True)} pp: no variance, both arms scored {pp(p.mean_a)}% on every one of "
                f"{p.n_tasks} tasks, so no test applies.")
    if p.no_variance:
        return (f"{who} {pp(p.diff, True)} pp on every one of {p.n_tasks} tasks (no variance: no t or CI); "
                f"exact sign test over tasks p {p_text(p.p_value)}.")
    test = f"exact McNemar p {p_text(p.mcnemar.p_value)}" if p.mcnemar else f"paired t p {p_text(p.p_value)}"
    return (
        f"{who} {pp(p.diff, True)} pp (per-task means {pp(p.mean_b)}% vs {pp(p.mean_a)}% over {p.n_tasks} tasks; "
        f"clustered SE {pp(p.se)} pp; {round(100 * (1 - p.alpha))}% CI [{pp(p.ci_low, True)}, {pp(p.ci_high, True)}] pp "
        f"({p.ci_method}); percentile bootstrap over tasks [{pp(p.boot_ci_low, True)}, {pp(p.boot_ci_high, True)}] pp "
        f"({p.n_boot} resamples, seed {p.seed}); {test})."
    )


def _verdict_section(n: ReportNumbers) -> list[str]:
    out = ["## Verdict"]
    if n.mde is not None:
        m = n.mde
        paired = f"{pp(m.paired_mde)} pp from the observed paired SE; " if m.paired_mde else ""
        out.append(
            f"**Minimum detectable effect** (stated before the verdict): with {_size(n)} per arm, the smallest "
            f"true improvement this eval detects with {round(100 * m.power)}% power at α = {m.alpha:g} is "
            f"{pp(m.headline_mde)} pp ({paired}{pp(m.design_mde)} pp for an unpaired design at the base rate "
            f"{pp(m.baseline_rate)}%)."
        )
    if n.paired is not None:
        out.append("**Paired over tasks** (the verdict's test): " + _paired_sentence(n.paired))
        if n.paired.missing_in_a or n.paired.missing_in_b:
            out.append(f"Tasks only the adapter ran: {md_text(n.paired.missing_in_a or 'none')}; "
                       f"only the base ran: {md_text(n.paired.missing_in_b or 'none')} (left out of the paired test).")
    if n.unpaired is not None:
        u = n.unpaired
        if u.z is None:
            out.append(f"**Unpaired two-proportion check** (as the seeds reported it): {pp(u.diff, True)} pp; "
                       "no variance (both arms all-fail or all-pass), so no z-test or interval applies.")
        else:
            out.append(
                f"**Unpaired two-proportion check** (the seeds' z-test): {pp(u.diff, True)} pp, z = {u.z:.2f}, "
                f"p {p_text(u.p_value)}, Newcombe {round(100 * (1 - u.alpha))}% CI "
                f"[{pp(u.ci_low, True)}, {pp(u.ci_high, True)}] pp."
            )
    if n.teacher_paired is not None and n.teacher_paired.n_tasks >= 2:
        out.append("**Teacher ceiling**: " + _paired_sentence(n.teacher_paired, "Teacher vs base"))
    out.append(f"**Verdict**: {n.verdict.replace('_', ' ')}.")
    return out


def _size(n: ReportNumbers) -> str:
    rows = n.mde.n_per_arm if n.mde else 0
    if n.paired is not None and n.paired.n_tasks:
        return f"{n.paired.n_tasks} tasks × {n.paired.trials_b} trials ({rows} rows)"
    return f"{rows} rows"


def _arm_table(arms: Mapping[str, ArmMetrics]) -> str:
    rows = []
    for arm, m in arms.items():
        e = m.pass_rate
        rows.append([
            _label(arm), f"{e.successes}/{e.n}", f"{pp(e.rate)}%", f"±{pp(e.se)}",
            Markdown(f"[{pp(e.ci_low)}, {pp(e.ci_high)}]"),
            f"{m.rows_with_tool_calls}/{m.n_rows}", m.n_unscored, _num(m.mean_reward), _num(m.mean_steps, 1),
            f"{pp(m.completion_rate)}%", f"{pp(m.format_failure_rate)}%",
        ])
    return md_table(["arm", "passes", "pass rate", "±1 SE (pp)", "Wilson 95% CI (%)", "rows with tool calls",
                   "unscored", "mean reward", "mean steps", "completion", "format failures / turn"], rows)


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _slice_table(title: str, slices: Mapping[str, Mapping[str, ArmMetrics]], arms: list[str]) -> list[str]:
    if not slices:
        return []
    rows = []
    for label, per_arm in slices.items():
        row: list[Any] = [label]
        for arm in arms:
            m = per_arm.get(arm)
            row += [_rate(m), _num(m.mean_reward) if m else "–", _num(m.mean_steps, 1) if m else "–"]
        rows.append(row)
    headers = [title] + [f"{_label(a)} {h}" for a in arms for h in ("pass", "reward", "steps")]
    return [f"## Per {title}", md_table(headers, rows)]


def _task_cell(task_id: str, explorer: str | None) -> str:
    """The task id, linked to its view in the trajectory explorer when the report has one."""
    if explorer is None:
        return task_id
    from env0_posttrain.evaluate.explorer.links import task_href

    return md_link(task_id, task_href(task_id, page=explorer))


def _flip_section(n: ReportNumbers, explorer: str | None = None) -> list[str]:
    f = n.flips
    if f is None:
        return []
    out = ["## Flip table (tasks, base → adapter)",
           f"A task counts as passed when at least half its trials pass. Both pass: {f.both_pass}; both fail: "
           f"{f.both_fail}; fail→pass: {len(f.fail_to_pass)}; pass→fail: {len(f.pass_to_fail)}; per-task rate up: "
           f"{f.improved}, down: {f.worsened}."]
    changed = [r for r in f.rows if r.change in ("fail→pass", "pass→fail")]
    if changed:
        out.append(md_table(["task", "change", "base passes", "adapter passes"],
                          [[_task_cell(r.task_id, explorer), r.change, f"{r.passes_a}/{r.trials_a}", f"{r.passes_b}/{r.trials_b}"] for r in changed],
                          "llrr"))
    return out


def _first_action_section(n: ReportNumbers) -> list[str]:
    if not n.first_action:
        return []
    rows = [[_label(arm), s.n, f"{pp(s.format_ok.rate)}%", f"{pp(s.name_match.rate)}%", f"{pp(s.args_match.rate)}%"]
            for arm, s in n.first_action.items()]
    return ["## One-shot first action vs the oracle's",
            "Read from each eval episode's first assistant message, against the oracle's first call.",
            md_table(["arm", "episodes", "format ok", "tool name match", "arguments exact match"], rows)]


def _behaviour_section(n: ReportNumbers) -> list[str]:
    if not n.behaviours:
        return []
    arms = list(n.behaviours)
    names = list(next(iter(n.behaviours.values())))
    rows = []
    for name in names:
        row: list[Any] = [name, n.behaviours[arms[0]][name].description]
        for arm in arms:
            b = n.behaviours[arm][name]
            row.append(f"{b.true}/{b.applicable}" + (f" ({b.rate:.0%})" if b.rate is not None else ""))
        rows.append(row)
    return ["## Behaviours", "Rates over the episodes where the behaviour applies.",
            md_table(["behaviour", "meaning"] + [_label(a) for a in arms], rows, "ll" + "r" * len(arms))]


def _format_failure_section(n: ReportNumbers) -> list[str]:
    from env0_posttrain.agent.messages import FORMAT_FAILURE_KINDS

    rows = [[_label(a), *(m.error_kinds.get(k, 0) for k in FORMAT_FAILURE_KINDS)] for a, m in n.arms.items()]
    return ["## Format failures by kind",
            "Replies the harness could not run as tool calls. `tool_call_in_content` / `tool_call_in_reasoning`: a "
            "`<tool_call>` the server's parser did not extract (no tool parser, or a reasoning parser swallowed it).",
            md_table(["arm", *FORMAT_FAILURE_KINDS], rows)]


def _ledger_section(ledger: list[LedgerEntry]) -> list[str]:
    if not ledger:
        return ["## Task set ledger", "No ledger was provided."]
    rows = [[e.family, e.n, "?" if e.used is None else e.used, e.dropped,
             f"{e.oracle_pass_rate:.0%}" if e.n else "—", f"{e.noop_pass_rate:.0%}" if e.n else "—",
             dropped_text(e.dropped_reasons)] for e in ledger]
    used = "?" if any(e.used is None for e in ledger) else sum(e.used for e in ledger)  # ?: stored before it was counted
    return ["## Task set ledger (generation-time check)",
            f"Drawn: tasks scored by the check, kept or not ({sum(e.n for e in ledger)}); used: in the task set's "
            f"splits ({used}); dropped: not kept, before or after scoring ({sum(e.dropped for e in ledger)}). "
            "The oracle should pass every drawn task; doing nothing should pass none.",
            md_table(["family", "drawn", "used", "dropped", "oracle pass", "no-op pass", "why dropped"], rows)]


def _unscored_section(n: ReportNumbers) -> list[str]:
    if not n.unscored:
        return ["## Unscored rows", "Zero unscored rows."]
    return [f"## Unscored rows ({len(n.unscored)})",
            "Counted as fails in every pass rate above and at the minimum reward (-1) in the mean reward.",
            md_table(["arm", "task", "trial", "reason"], [[_label(u.arm), u.task_id, u.trial, u.reason] for u in n.unscored])]


def _training_section(n: ReportNumbers) -> list[str]:
    t = n.training
    if not t.logged_rows:
        return []
    return ["## Training", f"{t.logged_rows} logged rows, last step {t.last_step}; final loss {_num(t.final_loss)}, "
            f"final eval loss {_num(t.final_eval_loss)}, best eval loss {_num(t.best_eval_loss)}"
            + (f", peak GPU memory {t.max_gpu_mem_gb:.1f} GB." if t.max_gpu_mem_gb is not None else ".")]


def _lineage_section(lineage: Mapping[str, Any]) -> list[str]:
    if not lineage:
        return ["## Lineage", "No lineage was provided."]
    return ["## Lineage", md_table(["what", "value"], [[k, v] for k, v in lineage.items()], "ll")]


def _figure(name: str, plot_paths: Mapping[str, str], out_dir: Path) -> list[str]:
    if name not in plot_paths:
        return []
    return [f"![{FIGURE_TITLES[name]}]({relative_to(plot_paths[name], out_dir)})"]


def _header(report: ComparisonReport, explorer: str | None) -> list[str]:
    blocks = [f"# Comparison report: {report.run_id}", f"**{report.headline}**",
              f"_Generated {report.created_at.isoformat(timespec='seconds')}._"]
    if explorer is not None:
        blocks.append(f"[Open every episode in the trajectory explorer]({explorer}): each task's transcript, tool "
                      "calls, verifier metrics and workspace diff, arms side by side.")
    return blocks


def _pass_rate_section(n: ReportNumbers) -> list[str]:
    blocks = ["## Pass rates (strict: reward ≥ 1)", _arm_table(n.arms)]
    kinds = [f"{_label(a)}: " + ", ".join(f"{md_text(k)} {v}" for k, v in m.error_kinds.items())
             for a, m in n.arms.items() if m.error_kinds]
    if kinds:
        blocks.append("Errors by kind (" + "; ".join(kinds) + ").")
    return blocks


def _split_section(n: ReportNumbers, arms: list[str]) -> list[str]:
    if not n.per_split:
        return []
    return _slice_table("split", n.per_split, arms) + [f"Split {s}: " + _paired_sentence(p)
                                                        for s, p in n.paired_by_split.items()]


def render_markdown(report: ComparisonReport, out_dir: Path, *, suites: SuitesView | None = None,
                    explorer: str | None = None, rl_training_metrics=(), onpolicy_rounds=()) -> str:
    """`explorer`: the trajectory explorer's page relative to out_dir, linked at the top and from each flip row;
    `suites`: the run's eval suites, their section first among the results."""
    n, plots, arms = report.numbers, report.plot_paths, list(report.numbers.arms)

    def figure(name: str) -> list[str]:
        return _figure(name, plots, out_dir)

    sections = [
        _header(report, explorer),
        suites_section(suites) if suites is not None else [],
        _verdict_section(n),
        _pass_rate_section(n),
        _format_failure_section(n) + figure("pass_rate"),
        _flip_section(n, explorer) + figure("flips"),
        _slice_table("family", n.per_family, arms) + figure("per_family"),
        _slice_table("difficulty", n.per_difficulty, arms),
        _split_section(n, arms),
        _first_action_section(n),
        _behaviour_section(n),
        _training_section(n) + figure("training"),
        ["## Nightly trend", *figure("trend")] if "trend" in plots else [],
        _ledger_section(report.ledger),
        _unscored_section(n),
        _lineage_section(report.lineage),
        rl_section(n.rl, rl_training_metrics, plots, out_dir),
        onpolicy_section(n.onpolicy, n.per_family, onpolicy_rounds),
    ]
    return "\n\n".join(block for section in sections for block in section) + "\n"


SUITE_ARM_LABELS = {"base": "Baseline", "sft": "SFT", "teacher_eval": "Teacher (ceiling)", "rl": "RL", "onpolicy": "On-policy"}


def _passes_cell(p: tuple[int, int] | None) -> str:
    if p is None:
        return "—"
    k, total = p
    return f"{k}/{total} ({100 * k / total:.2f}%)" if total else "0/0"


def _delta(a: tuple[int, int] | None, b: tuple[int, int] | None) -> str:
    if a is None or b is None or not a[1] or not b[1]:
        return "—"
    return f"{b[0] - a[0]:+d} passes, {100 * (b[0] / b[1] - a[0] / a[1]):+.2f} pp"


def _paired_cells(p: PairedAnalysis | None) -> tuple[str, str]:
    if p is None or p.ci_low is None:
        return "n/a", f"p {p_text(p.p_primary)}" if p is not None else "n/a"
    test = "exact McNemar" if p.mcnemar is not None else "paired t"
    return Markdown(f"[{pp(p.ci_low, True)}, {pp(p.ci_high, True)}] pp"), f"p {p_text(p.p_primary)} ({test})"


def suite_blocks(s: SuiteNumbers, link: str | None = None, level: str = "###") -> list[str]:
    """The suite's table, its other arms, its boundary ledger and any budget or row-length notes; `link`: the
    suite's own full report, relative to the page that shows this section."""
    b = s.boundary
    ci, p = _paired_cells(s.paired)
    title = f"{level} Suite {s.name} ({b.get('kind', 'split')}, {s.seen})"
    main = md_table(["Eval", "Baseline", "SFT", "Delta", "Paired 95% CI", "Test"],
                    [[f"{s.name}, {s.trials} trial{'s' if s.trials != 1 else ''}", _passes_cell(s.passes.get("base")),
                      _passes_cell(s.passes.get("sft")), _delta(s.passes.get("base"), s.passes.get("sft")), ci, p]])
    others = [[SUITE_ARM_LABELS[a], _passes_cell(s.passes[a]), _delta(s.passes.get("base"), s.passes[a])]
              for a in ("teacher_eval", "rl", "onpolicy") if a in s.passes]
    blocks = [title, main]
    if link is not None:
        blocks.append(f"[Suite {s.name}'s full report]({link}): its per-family and per-difficulty tables, flips, "
                      "first actions, behaviours, figures and trend, on this suite alone.")
    if others:
        blocks.append(md_table(["Arm", "Passes", "vs Baseline"], others))
    ledger = md_table(
        ["Seen", "Tasks", "Task-id overlap", "Package-name overlap", "Same content", "Same instruction",
         "Shared families", "Shared templates", "Dropped"],
        [[s.seen, b.get("tasks", "?"), b.get("task_id_overlap", "?"), b.get("package_name_overlap", "—"),
          b.get("content_overlap", "?"), b.get("instruction_overlap", "?"),
          ", ".join(b.get("shared_families", [])) or "none", ", ".join(b.get("shared_templates", [])) or "none",
          b.get("dropped", 0)]])
    blocks += [f"Boundary with the training set ({s.name}):", ledger]
    blocks += [f"Budget: {md_text(note)}" for note in s.budget_notes]
    if s.rows_note:
        blocks.append(md_text(s.rows_note))  # starts with "SFT rows", never with a character that opens a block
    return blocks


def suites_section(view: SuitesView) -> list[str]:
    """A run's report: the summary table over every suite, then each suite's blocks; a suite's own report: its
    blocks alone, at the top level. `view.note` closes the section."""
    if view.own:
        blocks = suite_blocks(view.numbers[0], level="##")
    else:
        summary = md_table(["Suite", "Seen", "Baseline", "SFT", "Delta", "Paired 95% CI"],
                           [[s.name, s.seen, _passes_cell(s.passes.get("base")), _passes_cell(s.passes.get("sft")),
                             _delta(s.passes.get("base"), s.passes.get("sft")), _paired_cells(s.paired)[0]]
                            for s in view.numbers])
        blocks = ["## Eval suites", summary]
        for s in view.numbers:
            blocks += suite_blocks(s, view.links.get(s.name))
    return blocks + ([view.note] if view.note else [])


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.3em .6em}"
    "th{background:#f3f3f3}img{max-width:100%}code{background:#f3f3f3}"
)


def render_html(markdown: str, out_dir: Path, title: str, figures: Mapping[str, str] | None = None) -> str:
    """Markdown -> HTML with each of the report's own figures (`figures`: name -> the PNG it wrote, linked by its
    path relative to out_dir) as a data: URI; any other image becomes its Markdown source, as text."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    own = {relative_to(path, out_dir): Path(path) for path in (figures or {}).values()}
    tokens = md.parse(markdown)
    for tok in tokens:
        for child in tok.children or []:
            if child.type != "image":
                continue
            src = child.attrs.get("src")
            if isinstance(src, str) and src in own and own[src].is_file():
                child.attrs["src"] = "data:image/png;base64," + base64.b64encode(own[src].read_bytes()).decode("ascii")
            else:  # not a figure the report wrote: nothing is read, the reader sees what was written
                child.type, child.tag, child.nesting, child.children = "text", "", 0, None
                child.content, child.attrs = f"![{child.content}]({src})", {}
    body = md.renderer.render(tokens, md.options, {})
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html_lib.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body>\n{body}</body></html>\n")
