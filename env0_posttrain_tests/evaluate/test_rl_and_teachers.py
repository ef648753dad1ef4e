"""The RL arm in the comparison report (RL vs base and vs SFT, paired, with flips and the GRPO curves),
and the teacher-bounded table over teacher backfills."""

from __future__ import annotations

import re

from env0_posttrain.evaluate import ReportInputs, build_report, report_metadata
from env0_posttrain.evaluate.teacher_table import plot_teacher_table, table_markdown, teacher_row
from env0_posttrain_tests.support.evaluate import make_episode, make_task

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
    rep = build_report(ReportInputs(episodes=eps, tasks=TASKS, n_boot=500, rl_training_metrics=RL_METRICS), tmp_path)
    rl = rep.numbers.rl
    assert set(rl) == {"rl_vs_base", "rl_vs_sft"}
    assert round(rl["rl_vs_sft"].paired.diff, 3) == 0.4 and len(rl["rl_vs_sft"].flips.fail_to_pass) == 8
    assert rl["rl_vs_sft"].paired.p_primary < 0.05  # 8 discordant tasks, all one way: exact McNemar p = 0.0078
    assert "## RL (GRPO after SFT)" in rep.markdown and "| rl vs sft | 20 |" in squash(rep.markdown)
    assert "rl_training" in rep.plot_paths and (tmp_path / "plots" / "rl_training.png").stat().st_size > 0
    nums = report_metadata(rep)["numbers"]
    assert nums["rl_vs_sft.diff_pp"] == 40.0 and nums["rl.pass_rate_pct"] == 80.0


def test_report_without_rl_has_no_rl_section(tmp_path):
    rep = build_report(ReportInputs(episodes=_arm("base", 0) + _arm("sft", 8), tasks=TASKS, n_boot=200), tmp_path)
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

    from env0_posttrain.util.paths import Paths
    from env0_posttrain.spec.runspec import parse_spec
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.store import Store
    from env0_posttrain.stages.teacher_table import backfilled_runs, build_teacher_table

    paths, store = Paths(tmp_path), Store(tmp_path / "env0.duckdb")
    for rid in ("demo", "demo--env0-oracle-oracle-0.5", "demo2", "other--x"):
        store.upsert_run(parse_spec({"run_id": rid}))
    ctx = StageContext("demo", parse_spec({"run_id": "demo"}), store, paths, logging.getLogger("t"))
    assert backfilled_runs(ctx) == ["demo", "demo--env0-oracle-oracle-0.5"]
    res = build_teacher_table(ctx)  # nothing evaluated yet: no rows, both runs named as missing
    assert res.metadata["teachers"] == 0 and res.metadata["runs_without_teacher_eval"] == backfilled_runs(ctx)


def test_rl_stage_stores_each_grpo_step_in_duckdb_and_the_report_plots_them(tmp_path, monkeypatch):
    """rl_adapter -> training_metrics (DuckDB, key <run>:rl) -> comparison_report's RL section and GRPO figure."""
    import logging

    import env0_posttrain.train.grpo as grpo
    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.stages.comparison_report import write_report
    from env0_posttrain.stages.rl_adapter import rl_training_key, train_rl_adapter
    from env0_posttrain.spec.runspec import parse_spec, write_spec
    from env0_posttrain.store import Store

    paths, run = Paths(tmp_path), "r1"
    TRAIN = make_task(99)
    spec = parse_spec({"run_id": run, "student": {"model": str(tmp_path / "student")}, "rl": {"max_steps": 3},
                       "tasks": {"n_eval": len(TASKS)}})
    write_spec(spec, paths.runs)
    store = Store(paths.db)
    store.upsert_run(spec)
    store.replace_task_set(run, "d", {}, [], [("train", TRAIN), *[("eval", t) for t in TASKS]])
    sft_id = store.start_training(run)
    store.finish_training(sft_id, "finished", str(tmp_path / "sft"), "sftrev", {})
    steps = [{"step": s, "reward": 0.2 * s, "reward_std": 0.4, "kl": 0.01 * s, "entropy": 0.5, "completion_tokens": 30.0,
              "episode_model_calls": 2.0, "wall_s": 10.0 * s} for s in (1, 2, 3)]

    def fake_train_rl(tasks, rl, eval_spec, base, sft_adapter, out_dir, run_id, on_log=None, env=None, base_ref=None,
                      device=None):
        assert sft_adapter == str(tmp_path / "sft") and [t.id for t in tasks] == [TRAIN.id]
        for row in steps:
            on_log(dict(row))
        (out_dir / "adapter").mkdir(parents=True)
        (out_dir / "adapter" / "adapter_model.safetensors").write_bytes(b"rl weights")
        return grpo.RLResult(adapter_dir=out_dir / "adapter", steps=3, runtime_s=30.0, episodes=96, cut_episodes=0,
                             first_reward=0.2, final_reward=0.6, metrics=steps)

    monkeypatch.setattr(grpo, "train_rl", fake_train_rl)
    ctx = StageContext(run, spec, store, paths, logging.getLogger("t"))
    res = train_rl_adapter(ctx)
    assert res.metadata["steps"] == 3 and all(c.passed for c in res.checks)
    assert store.latest_training(run)["train_id"] == sft_id  # the SFT adapter stays the run's adapter
    rl_train = store.latest_training(rl_training_key(run))
    # one DuckDB row per GRPO step, queryable by SQL
    rows = store.query("SELECT step, CAST(json_extract(metrics_json, '$.kl') AS DOUBLE), "
                       "CAST(json_extract(metrics_json, '$.entropy') AS DOUBLE) FROM training_metrics "
                       "WHERE train_id = ? ORDER BY step", [rl_train["train_id"]])
    assert [r[0] for r in rows] == [1, 2, 3] and rows[2][1] == 0.03 and rows[0][2] == 0.5
    assert [m["reward"] for m in store.training_metrics(rl_train["train_id"])] == [0.2, 0.4, 0.6000000000000001]

    for arm, passes in (("base", 0), ("sft", 8), ("rl", 12)):
        rid = store.open_round(run, arm, arm, len(TASKS))
        for ep in _arm(arm, passes, run_id=run):
            store.write_episode(rid, ep)
        store.finish_round(rid, {})
    rep = write_report(ctx)
    assert rep.metadata["rl_vs_sft.diff_pp"] == 20.0
    assert rep.metadata["plot_rl_training"].stat().st_size > 0
    md = rep.metadata["report_md"].read_text()
    assert "3 logged GRPO steps; last: reward 0.600" in md and "![GRPO per step](plots/rl_training.png)" in md
