"""The comparison report end to end: numbers, headline, files, figures, metadata."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportions_ztest

from env0_posttrain.evaluate import ReportInputs
from env0_posttrain.evaluate.report import build_report, report_metadata, trend_points, write_report
from env0_posttrain.evaluate.report_model import ComparisonReport
from env0_posttrain_tests.support.evaluate import arm_from_counts, make_episode, make_task

PNG = b"\x89PNG\r\n\x1a\n"
T0 = datetime(2026, 11, 20, 2, 0, tzinfo=timezone.utc)
LEDGER = [{"family": f, "n": 10, "oracle_pass_rate": 1.0, "noop_pass_rate": 0.0} for f in ("auth", "mail")]
LINEAGE = {"run_spec_digest": "abc123def4567890", "task_set_digest": "ts-0011", "teacher": "env0-oracle/oracle",
           "adapter_revision": "rev-42"}
METRICS = [{"step": s, "loss": 2.0 / s, "learning_rate": 1e-4, "grad_norm": 1.0 + s / 100} for s in range(10, 110, 10)]
METRICS += [{"step": 50, "eval_loss": 0.8}, {"step": 100, "eval_loss": 0.6, "gpu_mem_gb": 11.5}]


@pytest.fixture(scope="module")
def seed_like(tmp_path_factory):
    """The seed's final eval shape: 60 tasks x 3 trials, base 19/180, adapter 24/180, plus the teacher."""
    tasks = [make_task(i) for i in range(60)]
    eps = arm_from_counts("base", tasks, 3, 19, shuffle_seed=1) + arm_from_counts("sft", tasks, 3, 24, shuffle_seed=2)
    eps += arm_from_counts("teacher_eval", tasks, 3, 150, shuffle_seed=3)
    i = next(k for k, e in enumerate(eps) if e.passed)  # a passing base row becomes an unscored one
    eps[i] = make_episode("base", tasks[i % 60], i // 60, False, stop="infra_error", scored=False)
    out = tmp_path_factory.mktemp("seed_like")
    history = [{"timestamp": T0 - timedelta(days=d), "arm": arm, "pass_rate": r, "ci_low": r - 0.04, "ci_high": r + 0.05}
               for d in (1, 2) for arm, r in (("base", 0.10), ("sft", 0.12))]
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, training_metrics=METRICS, ledger=LEDGER, lineage=LINEAGE,
                                       history=history, n_boot=2000, created_at=T0), out)
    return report, out


def test_numbers_reproduce_the_seed(seed_like):
    report, _ = seed_like
    n = report.numbers
    base, sft = n.arms["base"].pass_rate, n.arms["sft"].pass_rate
    assert (sft.successes, sft.n, base.n) == (24, 180, 180)
    z, p = proportions_ztest([sft.successes, base.successes], [180, 180])
    assert n.unpaired.p_value == pytest.approx(p)
    assert n.paired.n_tasks == 60 and n.paired.trials_b == 3
    assert n.paired.diff == pytest.approx(sft.rate - base.rate)  # balanced design: paired mean == pooled difference
    assert n.verdict == "not_significant"
    assert [(u.arm, u.reason) for u in n.unscored] == [("base", "infra_error")]
    assert base.successes == 18  # the replaced row was a pass: an unscored row counts as a fail


def test_headline_claims_no_more_than_the_statistics(seed_like):
    report, _ = seed_like
    h = report.headline
    assert h.startswith("Adapter +") and "paired 95% CI [" in h and "not significant at this size" in h
    assert "MDE at 80% power = " in h and h.index("MDE") < h.index("not significant")
    assert "\n" not in h


def test_files_and_figures(seed_like):
    report, out = seed_like
    for name in ("report.md", "report.html", "report.json"):
        assert (out / name).is_file()
    assert set(report.plot_paths) == {"pass_rate", "per_family", "flips", "training", "trend"}
    for path in report.plot_paths.values():
        assert open(path, "rb").read(8) == PNG
    md = (out / "report.md").read_text()
    assert report.headline in md and "](plots/pass_rate.png)" in md and "](plots/trend.png)" in md
    html = (out / "report.html").read_text()
    assert report.headline.split(" (")[0] in html and "not significant at this size" in html
    assert html.count("data:image/png;base64,") == 5 and 'src="plots/' not in html
    assert not list(out.rglob("*.tmp"))


def test_markdown_holds_ledger_lineage_unscored_and_sections(seed_like):
    report, _ = seed_like
    md = report.markdown
    for needle in ("Minimum detectable effect", "Unpaired two-proportion check", "Flip table", "Per family",
                   "One-shot first action", "Behaviours", "Task set ledger", "abc123def4567890", "rev-42",
                   "Unscored rows (1)", "infra_error", "Teacher ceiling", "Training", "best eval loss 0.600"):
        assert needle in md, needle
    assert md.index("Minimum detectable effect") < md.index("**Verdict**")


def test_json_round_trips_and_metadata_is_plain(seed_like):
    report, out = seed_like
    stored = json.loads((out / "report.json").read_text())
    again = ComparisonReport.model_validate({**stored, "html": ""})
    assert again.headline == report.headline and again.numbers.paired.diff == pytest.approx(report.numbers.paired.diff)
    # the folder is self-contained: its files and figures are named relative to it, and a moved copy still finds them
    assert stored["files"] == {n: n for n in ("report.md", "report.html", "report.json")}
    assert stored["plot_paths"]["pass_rate"] == "plots/pass_rate.png" and not any(
        Path(v).is_absolute() for v in [*stored["plot_paths"].values(), *stored["files"].values()])
    moved = shutil.copytree(out, out.parent / "moved")
    assert all((moved / v).read_bytes()[:8] == PNG for v in stored["plot_paths"].values())
    meta = report_metadata(report)
    json.dumps(meta, allow_nan=False)  # plain, finite values only
    assert meta["headline"] == report.headline and meta["markdown"] == report.markdown
    assert meta["numbers"]["sft.passes"] == 24 and meta["numbers"]["unscored_rows"] == 1
    assert meta["numbers"]["paired.test"] == "paired t" and meta["plots"]["pass_rate"].endswith("pass_rate.png")
    assert meta["files"]["report.html"].endswith("report.html")
    assert meta["markdown_inline"].count("](data:image/png;base64,") == 5 and "](plots/" not in meta["markdown_inline"]
    points = trend_points(report)
    assert {p.arm for p in points} == {"base", "sft", "teacher_eval"} and all(p.timestamp == T0 for p in points)


def test_pairing_sees_what_the_unpaired_test_cannot(tmp_path):
    """Same counts as the seed, but every changed task moved up: paired is significant, unpaired is not."""
    tasks = [make_task(i) for i in range(60)]
    eps = arm_from_counts("base", tasks, 3, 19) + arm_from_counts("sft", tasks, 3, 24)
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=1000, created_at=T0), tmp_path)
    assert round(report.numbers.unpaired.p_value, 2) == 0.42
    assert report.numbers.paired.p_value < 0.05 and report.numbers.verdict == "significant_improvement"
    assert report.numbers.flips.pass_to_fail == [] and report.numbers.flips.worsened == 0


def test_significant_improvement_with_one_trial_uses_mcnemar(tmp_path):
    tasks = [make_task(i) for i in range(40)]
    eps = [make_episode("base", t, 0, i < 4) for i, t in enumerate(tasks)]
    eps += [make_episode("sft", t, 0, i < 30) for i, t in enumerate(tasks)]
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=1000, created_at=T0), tmp_path)
    assert report.numbers.verdict == "significant_improvement"
    assert "exact McNemar" in report.headline and report.headline.endswith("significant at α = 0.05")
    assert report.numbers.flips is not None and len(report.numbers.flips.fail_to_pass) == 26
    assert "training" not in report.plot_paths and "trend" not in report.plot_paths
    assert "Zero unscored rows." in report.markdown and "No ledger was provided." in report.markdown


def test_identical_all_fail_arms_say_no_variance_not_p_one(tmp_path):
    """The demo's worst case: both arms fail everything. No p-value or zero-width CI is printed."""
    tasks = [make_task(i) for i in range(10)]
    eps = [make_episode(arm, t, k, False) for arm in ("base", "sft") for t in tasks for k in range(3)]
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=200, created_at=T0), tmp_path)
    assert report.numbers.verdict == "not_significant" and report.numbers.paired.p_primary is None
    assert "no variance" in report.headline and "p = 1.00" not in report.headline
    assert "no test applies" in report.markdown and "CI [+0.00, +0.00]" not in report.markdown


def test_regression_is_called_worse(tmp_path):
    tasks = [make_task(i) for i in range(40)]
    eps = [make_episode("base", t, k, i < 30) for i, t in enumerate(tasks) for k in range(2)]
    eps += [make_episode("sft", t, k, i < 5) for i, t in enumerate(tasks) for k in range(2)]
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=500, created_at=T0), tmp_path)
    assert report.numbers.verdict == "significant_regression" and "significantly worse" in report.headline


def test_seen_and_heldout_splits_reported_when_both_exist(tmp_path):
    tasks = [make_task(i) for i in range(12)]
    splits = {t.id: "eval" if i < 8 else "heldout" for i, t in enumerate(tasks)}
    eps = [make_episode(arm, t, 0, arm == "sft" and i < 8) for arm in ("base", "sft") for i, t in enumerate(tasks)]
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, splits=splits, n_boot=500, created_at=T0), tmp_path)
    assert set(report.numbers.per_split) == {"eval", "heldout"}
    assert report.numbers.paired_by_split["heldout"].diff == 0 and report.numbers.paired_by_split["eval"].diff == 1
    assert "## Per split" in report.markdown and "Split heldout:" in report.markdown
    one_split = build_report(ReportInputs(episodes=eps, tasks=tasks, splits={t.id: "eval" for t in tasks}, n_boot=500),
                             tmp_path / "b")
    assert one_split.numbers.per_split == {} and "## Per split" not in one_split.markdown


def test_missing_adapter_arm_gives_no_verdict(tmp_path):
    tasks = [make_task(i) for i in range(4)]
    report = build_report(ReportInputs(episodes=[make_episode("base", t, 0, False) for t in tasks], tasks=tasks), tmp_path)
    assert report.numbers.verdict == "insufficient_data" and "no sft episodes" in report.headline
    assert report.numbers.paired is None and "flips" not in report.plot_paths


def test_bad_inputs_fail_clearly(tmp_path):
    tasks = [make_task(0)]
    with pytest.raises(ValueError, match="no eval episodes"):
        build_report(ReportInputs(episodes=[], tasks=tasks), tmp_path)
    with pytest.raises(ValueError, match="appears twice"):
        build_report(ReportInputs(episodes=[make_episode("sft", tasks[0], 0, True)], tasks=tasks + tasks), tmp_path)
    with pytest.raises(ValueError, match=r"ledger row 0 \('auth'\)"):
        build_report(ReportInputs(episodes=[make_episode("sft", tasks[0], 0, True)], tasks=tasks,
                                  ledger=[{"family": "auth", "n": 3, "oracle_pass_rate": 1.5, "noop_pass_rate": 0}]), tmp_path)
    with pytest.raises(ValueError, match=r"history row 0: timestamp"):
        build_report(ReportInputs(episodes=[make_episode("sft", tasks[0], 0, True)], tasks=tasks,
                                  history=[{"timestamp": "not a time", "arm": "sft", "pass_rate": 0.1}]), tmp_path)
    assert not (tmp_path / "report.json").exists()


def test_rewrite_replaces_files_whole(seed_like, tmp_path):
    report, _ = seed_like
    files = write_report(report.model_copy(update={"markdown": "# replaced\n"}), tmp_path)
    assert (tmp_path / "report.md").read_text() == "# replaced\n" and set(files) == {"report.md", "report.html", "report.json"}
    assert not list(tmp_path.glob(".*.tmp"))
