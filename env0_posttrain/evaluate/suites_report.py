"""One table per eval suite in the seeds' shape (passes / rows per arm, delta in pp, paired statistics), its
boundary ledger against the training set, and a headline over the suites.

The headline may call a gain generalization only on a suite that is unseen by the training set; a gain on a seen
suite is named as such, and suites that disagree (in direction, or in what the paired test supports) are said to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate.metrics import by_arm, task_trials
from env0_posttrain.evaluate.statistics import PairedAnalysis, paired_analysis
from env0_posttrain.evaluate.verdict import Verdict, decide, p_text, pp
from env0_posttrain.util.markdown_table import Markdown, md_table, md_text

ARM_LABELS = {"base": "Baseline", "sft": "SFT", "teacher_eval": "Teacher (ceiling)", "rl": "RL"}


class SuiteNumbers(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    boundary: dict
    trials: int
    passes: dict[str, tuple[int, int]]  # arm -> (passes, rows)
    paired: PairedAnalysis | None = None  # sft vs base
    verdict: Verdict = "insufficient_data"
    budget_notes: list[str] = []
    rows_note: str | None = None

    @property
    def seen(self) -> str:
        return str(self.boundary.get("seen", "unseen"))


def suite_numbers(name: str, episodes: Sequence[Episode], boundary: Mapping, trials: int, *, alpha: float = 0.05,
                  n_boot: int = 10_000, seed: int = 0, budget_notes: Sequence[str] = (),
                  rows_note: str | None = None) -> SuiteNumbers:
    groups = by_arm(episodes)
    passes = {arm: (sum(e.passed for e in g), len(g)) for arm, g in groups.items()}
    paired = None
    if "base" in groups and "sft" in groups:
        paired = paired_analysis(task_trials(groups["base"]), task_trials(groups["sft"]), alpha=alpha, n_boot=n_boot,
                                 seed=seed)
    return SuiteNumbers(name=name, boundary=dict(boundary), trials=trials, passes=passes, paired=paired,
                        verdict=decide(paired, alpha), budget_notes=list(budget_notes), rows_note=rows_note)


def _cell(p: tuple[int, int] | None) -> str:
    if p is None:
        return "—"
    k, n = p
    return f"{k}/{n} ({100 * k / n:.2f}%)" if n else "0/0"


def _delta(a: tuple[int, int] | None, b: tuple[int, int] | None) -> str:
    if a is None or b is None or not a[1] or not b[1]:
        return "—"
    return f"{b[0] - a[0]:+d} passes, {100 * (b[0] / b[1] - a[0] / a[1]):+.2f} pp"


def _paired_cells(p: PairedAnalysis | None) -> tuple[str, str]:
    if p is None or p.ci_low is None:
        return "n/a", f"p {p_text(p.p_primary)}" if p is not None else "n/a"
    test = "exact McNemar" if p.mcnemar is not None else "paired t"
    return Markdown(f"[{pp(p.ci_low, True)}, {pp(p.ci_high, True)}] pp"), f"p {p_text(p.p_primary)} ({test})"


def suite_section(s: SuiteNumbers, link: str | None = None, level: str = "###") -> list[str]:
    """The suite's table, its other arms, its boundary ledger and any budget or row-length notes; `link`: the
    suite's own full report, relative to the page that shows this section."""
    b = s.boundary
    ci, p = _paired_cells(s.paired)
    title = f"{level} Suite {s.name} ({b.get('kind', 'split')}, {s.seen})"
    main = md_table(["Eval", "Baseline", "SFT", "Delta", "Paired 95% CI", "Test"],
                    [[f"{s.name}, {s.trials} trial{'s' if s.trials != 1 else ''}", _cell(s.passes.get("base")),
                      _cell(s.passes.get("sft")), _delta(s.passes.get("base"), s.passes.get("sft")), ci, p]])
    others = [[ARM_LABELS[a], _cell(s.passes[a]), _delta(s.passes.get("base"), s.passes[a])]
              for a in ("teacher_eval", "rl") if a in s.passes]
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
    blocks += [f"Budget: {md_text(n)}" for n in s.budget_notes]
    if s.rows_note:
        blocks.append(md_text(s.rows_note))  # starts with "SFT rows", never with a character that opens a block
    return blocks


def suites_markdown(suites: Sequence[SuiteNumbers], links: Mapping[str, str] | None = None) -> str:
    """`links`: suite name -> its full report, relative to the report folder (suites without one get no link)."""
    summary = md_table(["Suite", "Seen", "Baseline", "SFT", "Delta", "Paired 95% CI"],
                       [[s.name, s.seen, _cell(s.passes.get("base")), _cell(s.passes.get("sft")),
                         _delta(s.passes.get("base"), s.passes.get("sft")), _paired_cells(s.paired)[0]]
                        for s in suites])
    blocks = ["## Eval suites", summary]
    for s in suites:
        blocks += suite_section(s, (links or {}).get(s.name))
    return "\n\n".join(blocks) + "\n"


_SHORT = {"significant_improvement": "significant", "significant_regression": "significantly worse",
          "not_significant": "n.s.", "insufficient_data": "too few tasks"}


def suites_headline(suites: Sequence[SuiteNumbers]) -> str:
    """Adapter vs base on every suite; a seen suite's gain is never called generalization; disagreement is said."""
    scored = [s for s in suites if s.paired is not None]
    if not scored:
        return "No base-vs-adapter verdict: no suite has both base and adapter episodes"
    parts = []
    for s in scored:
        tag = "seen: training tasks" if s.seen == "seen" else s.seen
        parts.append(f"{s.name} {pp(s.paired.diff, True)} pp ({tag}; {_SHORT[s.verdict]})")
    text = "Adapter vs base by suite: " + ", ".join(parts)
    notes = []
    seen_gain = [s.name for s in scored if s.seen != "unseen" and s.verdict == "significant_improvement"]
    unseen = [s for s in scored if s.seen == "unseen"]
    if seen_gain:
        notes.append(f"the gain on {', '.join(seen_gain)} is on tasks the adapter trained on (or shares with them), "
                     "not generalization")
    unseen_gain = [s.name for s in unseen if s.verdict == "significant_improvement"]
    if unseen_gain:
        notes.append(f"held-out gain on {', '.join(unseen_gain)}")
    elif unseen:
        notes.append("no significant gain on any unseen suite")
    signs = {(s.paired.diff > 0) - (s.paired.diff < 0) for s in scored if s.paired.diff == s.paired.diff}
    verdicts = {s.verdict for s in scored}
    if len(signs - {0}) > 1 or len(verdicts) > 1:
        notes.append("the suites disagree")
    return text + (" — " + "; ".join(notes) if notes else "")


def suites_numbers(suites: Sequence[SuiteNumbers]) -> dict:
    """Flat numbers for the asset's metadata and report.json."""
    out: dict = {}
    for s in suites:
        for arm, (k, n) in s.passes.items():
            out[f"suite.{s.name}.{arm}.passes"] = k
            out[f"suite.{s.name}.{arm}.rows"] = n
        if s.paired is not None:
            out[f"suite.{s.name}.paired.diff_pp"] = round(100 * s.paired.diff, 4) if s.paired.diff == s.paired.diff else None
            out[f"suite.{s.name}.paired.p_value"] = s.paired.p_primary
        out[f"suite.{s.name}.seen"] = s.seen
        out[f"suite.{s.name}.task_id_overlap"] = s.boundary.get("task_id_overlap")
    return out
