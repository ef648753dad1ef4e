"""The report of a run with eval suites: every suite gets its own full report (its numbers, its plots, its trend)
linked from the main report, whose details are about an unseen suite; a run without suites writes none.

Stages on a temporary store, every arm played by the offline oracle at its own skill (no student is built)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from env0_posttrain.agent import oracle_endpoint
from env0_posttrain.evaluate.report_model import ComparisonReport
from env0_posttrain.util.paths import Paths
from env0_posttrain.stages import arms as models
from env0_posttrain.stages.context import StageContext
from env0_posttrain.stages.eval_suites import build_eval_suites
from env0_posttrain.stages.eval_trajectories import evaluate_arm
from env0_posttrain.stages.comparison_report import write_report
from env0_posttrain.stages.task_set import build_task_set
from env0_posttrain.spec.runspec import parse_spec
from env0_posttrain.store import Store
from env0_posttrain.tasks import starter_template_ids

SKILL = {"base": 0.3, "sft": 0.6, "teacher_eval": 1.0}
TASKS = {"n_train": 6, "seed": 3, "templates": starter_template_ids(max_calls=1)}
EVAL = {"trials": 2, "max_steps": 6, "concurrency": 4}
SUITES = [{"name": "seen", "kind": "seen", "sample": 4},  # listed first: the details must still go to an unseen suite
          {"name": "fresh", "kind": "generated", "sample": 5, "seed": 9, "exclude_train": True, "trials": 1}]


@pytest.fixture
def stage(tmp_path: Path, monkeypatch):
    def endpoint(spec, arm, store, run_id, paths):
        return oracle_endpoint(skill=SKILL[arm], seed=1).model_copy(update={"max_tokens": spec.eval.max_tokens})

    monkeypatch.setattr(models, "arm_endpoint", endpoint)
    monkeypatch.setattr(models, "base_student_identity", lambda *a: "student-weights-v1")
    paths = Paths(tmp_path)
    store = Store(paths.db)

    def ctx(data: dict) -> StageContext:
        spec = parse_spec(data)
        store.upsert_run(spec)
        return StageContext(spec.run_id, spec, store, paths, logging.getLogger("test"))

    return ctx, store


def _report(path: Path) -> ComparisonReport:
    """report.json as written (it leaves out the HTML, which report.html holds)."""
    return ComparisonReport.model_validate(json.loads(path.read_text()) | {"html": ""})


def test_each_suite_gets_its_own_full_report_and_the_details_lead_with_an_unseen_suite(stage):
    ctx, store = stage
    c = ctx({"run_id": "suites", "tasks": {**TASKS, "n_eval": 0}, "eval": EVAL, "suites": SUITES})
    build_task_set(c)
    build_eval_suites(c)
    for arm in SKILL:
        evaluate_arm(c, arm)
    evaluate_arm(c, "base", ["seen"])  # a second round of one suite: only its own report has a trend
    result = write_report(c)
    folder = Path(store.latest_report("suites")["report_dir"])
    numbers = store.latest_report("suites")["numbers"]
    md = (folder / "report.md").read_text()
    assert "The sections below detail suite fresh (the first suite unseen by the training set" in md
    assert "detail suite seen" not in md
    assert result.metadata["details_suite"] == "fresh"
    for name, tasks, trials in (("seen", 4, 2), ("fresh", 5, 1)):
        link = f"suites/{name}/report.html"
        assert f"[Suite {name}'s full report]({link})" in md  # relative: it opens from file://
        assert (folder / link).is_file() and (folder / "suites" / name / "report.md").is_file()
        assert result.metadata[f"suite_report_{name}"] == folder / link
        own = _report(folder / "suites" / name / "report.json")
        for arm in SKILL:  # the suite's own numbers, as the main report's suite table counts them
            rate = own.numbers.arms[arm].pass_rate
            assert (rate.successes, rate.n) == (numbers[f"suite.{name}.{arm}.passes"], numbers[f"suite.{name}.{arm}.rows"])
            assert rate.n == tasks * trials
        assert own.lineage["suite"] == name and own.headline.startswith(f"Adapter vs base by suite: {name} ")
        sub = (folder / "suites" / name / "report.md").read_text()
        assert f"## Suite {name} (" in sub and "(../../report.html)" in sub and "(../../explorer/index.html)" in sub
        assert (folder / "suites" / name / "plots" / "pass_rate.png").is_file()
    assert (folder / "suites" / "seen" / "plots" / "trend.png").is_file()
    assert not (folder / "suites" / "fresh" / "plots" / "trend.png").exists()
    # the main report's unprefixed numbers are the lead suite's, and its suite numbers are every suite's
    main = _report(folder / "report.json")
    assert main.numbers.arms["base"].pass_rate.n == numbers["suite.fresh.base.rows"] == 5
    assert [s.name for s in main.suites] == ["seen", "fresh"]  # report.json keeps every suite's numbers too
    assert main.suites[1].passes["base"] == (numbers["suite.fresh.base.passes"], 5)


def test_a_run_without_suites_writes_no_suite_reports(stage):
    ctx, store = stage
    c = ctx({"run_id": "plain", "tasks": {**TASKS, "n_eval": 4}, "eval": EVAL})
    build_task_set(c)
    for arm in ("base", "sft"):
        evaluate_arm(c, arm)
    result = write_report(c)
    folder = Path(store.latest_report("plain")["report_dir"])
    assert not (folder / "suites").exists()
    assert not any(k.startswith(("suite_report_", "details_suite")) for k in result.metadata)
    md = (folder / "report.md").read_text()
    assert "Eval suites" not in md and "sections below detail" not in md
