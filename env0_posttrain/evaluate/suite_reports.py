"""Each eval suite's own report beside the run's: which suites get one, what it holds, and where it is linked from.

A suite's report is the whole comparison report on that suite's episodes alone (its own plots and trend), headed by
its suite section and a link back, in <report folder>/suites/<name>/; a suite without episodes has none.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from env0_posttrain.evaluate.report import build_report
from env0_posttrain.evaluate.report_model import ReportInputs, SuitesView

SUITES_DIR = "suites"  # each suite's full report: <report folder>/suites/<name>/report.{md,html,json}

# suite name -> (its episodes, its tasks, arm -> its round id)
SuiteParts = dict[str, tuple[list, list, dict[str, str]]]


def suite_links(parts: SuiteParts) -> dict[str, str]:
    """Suite name -> its full report, relative to the main report's folder (a suite with no episodes has none)."""
    return {name: f"{SUITES_DIR}/{name}/report.html" for name, (episodes, _, _) in parts.items() if episodes}


def write_suite_reports(run: ReportInputs, parts: SuiteParts, report_dir: Path,
                        history_of: Callable[[str, dict], list[dict]]) -> dict[str, str]:
    """Every suite with episodes gets its report in <report_dir>/suites/<name>/; returns name -> its report.html.
    `run`: the run's report inputs; `history_of(name, rounds)`: the suite's earlier eval results."""
    out: dict[str, str] = {}
    for s in run.suites.numbers if run.suites is not None else ():
        episodes, tasks, rounds = parts[s.name]
        if not episodes:
            continue
        own = run.model_copy(update={
            "episodes": episodes, "tasks": tasks, "splits": {t.id: s.name for t in tasks},
            "lineage": run.lineage | {"suite": s.name, "eval_rounds": rounds}, "history": history_of(s.name, rounds),
            "explorer": f"../../{run.explorer}",
            "suites": SuitesView(numbers=[s], own=True, note="[Back to the run's report over every suite](../../report.html)."),
        })
        out[s.name] = build_report(own, report_dir / SUITES_DIR / s.name).files["report.html"]
    return out
