"""The on-policy arm in the comparison report: against base, SFT and the teacher ceiling (paired, with flips), the
teacher-bounded table per family, and the rounds' own figures; a run without it keeps the report it had."""

from __future__ import annotations

from env0_posttrain.evaluate import ReportInputs, build_report, report_metadata
from env0_posttrain.evaluate.onpolicy_compare import gap_closed
from env0_posttrain_tests.evaluate.test_rl_and_teachers import TASKS, _arm, squash

ROUNDS = [{"round": 1, "episodes": 20, "pass_rate": 0.4, "teacher_agreement": 0.5, "teacher_errors": 1,
           "rows_new": 30, "rows_trained": 30, "tokens_trained": 900, "steps": 10},
          {"round": 2, "episodes": 20, "pass_rate": 0.55, "teacher_agreement": 0.7, "teacher_errors": 0,
           "rows_new": 28, "rows_trained": 58, "tokens_trained": 1800, "steps": 10}]


def test_report_compares_onpolicy_with_base_sft_and_teacher_and_bounds_it_by_the_teacher(tmp_path):
    eps = _arm("base", 0) + _arm("sft", 8) + _arm("teacher_eval", 18) + _arm("onpolicy", 14)
    rep = build_report(ReportInputs(episodes=eps, tasks=TASKS, n_boot=500, onpolicy_rounds=ROUNDS), tmp_path)
    op = rep.numbers.onpolicy
    assert set(op) == {"onpolicy_vs_base", "onpolicy_vs_sft", "onpolicy_vs_teacher_eval"}
    assert round(op["onpolicy_vs_sft"].paired.diff, 3) == 0.3 and len(op["onpolicy_vs_sft"].flips.fail_to_pass) == 6
    assert round(op["onpolicy_vs_teacher_eval"].paired.diff, 3) == -0.2
    md = squash(rep.markdown)
    assert "## On-policy distillation (after SFT)" in md and "| onpolicy vs sft | 20 |" in md
    # tasks 0-19 cycle through the six families; the first n of them pass in each arm
    assert "| auth | 75.0% | 50.0% | 75.0% | +100% |" in md and "| mail | 100.0% | 33.3% | 66.7% | +50% |" in md
    assert "| 2 | 20 | 0.550 | 0.700 | 0 | 28 | 58 | 1800 | 10 |" in md
    nums = report_metadata(rep)["numbers"]
    assert nums["onpolicy_vs_sft.diff_pp"] == 30.0 and nums["onpolicy.pass_rate_pct"] == 70.0
    assert rep.numbers.rl == {}


def test_report_without_onpolicy_has_no_onpolicy_section(tmp_path):
    rep = build_report(ReportInputs(episodes=_arm("base", 0) + _arm("sft", 8), tasks=TASKS, n_boot=200), tmp_path)
    assert rep.numbers.onpolicy == {} and "On-policy" not in rep.markdown


def test_gap_closed():
    assert abs(gap_closed(0.9, 0.4, 0.7) - 0.6) < 1e-12
    assert gap_closed(0.9, 0.4, 0.3) < 0  # widened
    assert gap_closed(0.4, 0.4, 0.5) is None and gap_closed(None, 0.4, 0.5) is None
