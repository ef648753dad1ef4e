"""The report's one-line headline: it may claim exactly what the paired test supports, and no more.

The minimum detectable effect is stated before the verdict, so "not significant" reads as "this eval could not have
seen an effect smaller than M pp", never as "SFT does nothing". With eval suites the line is about every suite: a
gain may be called generalization only on a suite unseen by the training set, a gain on a seen suite is named as
such, and suites that disagree (in direction, or in what the paired test supports) are said to.
"""

from __future__ import annotations

from collections.abc import Sequence

from env0_posttrain.evaluate.report_model import SuiteNumbers
from env0_posttrain.evaluate.statistics import MinimumDetectableEffect, PairedAnalysis
from env0_posttrain.evaluate.verdict import Verdict, decide, identical_arms, p_text, pp


def headline(paired: PairedAnalysis | None, mde: MinimumDetectableEffect | None, alpha: float,
             missing: Sequence[str] = (), suites: Sequence[SuiteNumbers] = ()) -> tuple[Verdict, str]:
    """(verdict, headline) of adapter vs base: `paired` / `mde` over the report's episodes, `missing` the arms
    (base, sft) it has none of. With `suites` the verdict is still the report's own episodes' (the suite its
    details are about); the line speaks for every suite."""
    verdict = "insufficient_data" if missing else decide(paired, alpha)
    if suites:
        return verdict, _suites_line(suites)
    if missing:
        return verdict, f"No base-vs-adapter verdict: the eval has no {' or '.join(missing)} episodes"
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
        f"paired {level}% CI [{pp(paired.ci_low, True)}, {pp(paired.ci_high, True)}] pp{_method(paired)}, "
        f"p {p_text(paired.p_primary)} ({test}); {mde_text})"
    )
    tail = {
        "significant_improvement": f"significant at α = {alpha:g}",
        "significant_regression": f"significantly worse at α = {alpha:g}",
        "not_significant": "not significant at this size",
    }[verdict]
    return verdict, f"{body} — {tail}"


def _method(paired: PairedAnalysis) -> str:
    """The interval's own method beside it: the test that gives p is often another (a BCa interval, a t test)."""
    return f" ({paired.ci_method})" if paired.ci_method else ""


_SHORT = {"significant_improvement": "significant", "significant_regression": "significantly worse",
          "not_significant": "n.s.", "insufficient_data": "too few tasks"}


def _suites_line(suites: Sequence[SuiteNumbers]) -> str:
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
