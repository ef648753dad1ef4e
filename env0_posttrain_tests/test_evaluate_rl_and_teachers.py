"""The RL arm in the comparison report (RL vs base and vs SFT, paired, with flips and the GRPO curves),
and the teacher-bounded table over teacher backfills."""

from __future__ import annotations

import re

from env0_posttrain.evaluate import build_report, report_metadata
from env0_posttrain.evaluate.teacher_table import plot_teacher_table, table_markdown, teacher_row
from env0_posttrain_tests.test_evaluate_support import make_episode, make_task

TASKS = [make_task(i) for i in range(20)]
RL_METRICS = [{"step": s, "reward": 0.1 * s, "reward_std": 0.3, "kl": 0.01 * s, "entropy": 2.0,
               "episode_model_calls": 2.5} for s in range(1, 6)]


def squash(markdown: str) -> str:
    """Table cells are padded to their column's width; one space apart reads the same."""
    return re.sub(r" +", " ", markdown)


def _arm(arm, passes, run_id="run-1", trials=1):
    return [make_episode(arm, t, k, i < passes, run_id=run_id) for i, t in enumerate(TASKS) for k in range(trials)]


def test_report_compares_rl_with_base_and_sft_and_plots_grpo_steps(tmp_path):
    eps = _arm("base", 0) + _arm("sft", 8) + _arm("rl", 16)
    rep = build_report(eps, TASKS, tmp_path, n_boot=500, rl_training_metrics=RL_METRICS)
    rl = rep.numbers.rl
    assert set(rl) == {"rl_vs_base", "rl_vs_sft"}
    assert round(rl["rl_vs_sft"].paired.diff, 3) == 0.4 and len(rl["rl_vs_sft"].flips.fail_to_pass) == 8
    assert rl["rl_vs_sft"].paired.p_primary < 0.05  # 8 discordant tasks, all one way: exact McNemar p = 0.0078
    assert "## RL (GRPO after SFT)" in rep.markdown and "| rl vs sft | 20 |" in squash(rep.markdown)
    assert "rl_training" in rep.plot_paths and (tmp_path / "plots" / "rl_training.png").stat().st_size > 0
    nums = report_metadata(rep)["numbers"]
    assert nums["rl_vs_sft.diff_pp"] == 40.0 and nums["rl.pass_rate_pct"] == 80.0


def test_report_without_rl_has_no_rl_section(tmp_path):
    rep = build_report(_arm("base", 0) + _arm("sft", 8), TASKS, tmp_path, n_boot=200)
    assert rep.numbers.rl == {} and "RL (GRPO" not in rep.markdown and "rl_training" not in rep.plot_paths


def test_teacher_row_gives_gap_ci_and_the_share_of_teacher_passes_kept(tmp_path):
    strong = teacher_row("d--strong", "env0-oracle/oracle@1.0", _arm("teacher_eval", 20) + _arm("sft", 10)
                         + _arm("rl", 12), n_boot=200)
    weak = teacher_row("d--weak", "env0-faulty/env0-oracle/oracle@0.5", _arm("teacher_eval", 10) + _arm("sft", 5),
                       n_boot=200)
    assert strong.teacher_pass_rate.rate == 1.0 and [s.arm for s in strong.students] == ["sft", "rl"]
    sft = strong.students[0]
    assert round(sft.gap, 3) == -0.5 and sft.gap_ci_low < sft.gap < sft.gap_ci_high < 0
    assert sft.teacher_passes_kept == 0.5 and weak.students[0].teacher_passes_kept == 0.5
    assert teacher_row("x", "t", _arm("sft", 3)) is None  # no teacher side: no row
    md = table_markdown([strong, weak])
    assert "| env0-oracle/oracle@1.0 | d--strong | 100.0 | sft | 50.0 | -50.0 |" in squash(md)
    assert plot_teacher_table([strong, weak], tmp_path / "t.png").stat().st_size > 0


def test_teacher_table_stage_reads_the_source_run_and_its_backfills_only(tmp_path):
    import logging

    from env0_posttrain.paths import Paths
    from env0_posttrain.runspec import parse_spec
    from env0_posttrain.run.context import StageContext
    from env0_posttrain.store import Store
    from env0_posttrain.run.teacher_table import backfilled_runs, build_teacher_table

    paths, store = Paths(tmp_path), Store(tmp_path / "env0.duckdb")
    for rid in ("demo", "demo--env0-oracle-oracle-0.5", "demo2", "other--x"):
        store.upsert_run(parse_spec({"run_id": rid}))
    ctx = StageContext("demo", parse_spec({"run_id": "demo"}), store, paths, logging.getLogger("t"))
    assert backfilled_runs(ctx) == ["demo", "demo--env0-oracle-oracle-0.5"]
    res = build_teacher_table(ctx)  # nothing evaluated yet: no rows, both runs named as missing
    assert res.metadata["teachers"] == 0 and res.metadata["runs_without_teacher_eval"] == backfilled_runs(ctx)
