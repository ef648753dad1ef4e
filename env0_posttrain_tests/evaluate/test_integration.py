"""The report over real episodes: a generated task set, the one agent loop, the offline oracle at three skills."""

from __future__ import annotations

import pytest

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
from env0_posttrain.evaluate import ReportInputs, build_report, report_metadata
from env0_posttrain.spec.runspec import TaskSelection
from env0_posttrain.tasks import make_task_set


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    ts = make_task_set(TaskSelection(n_train=3, n_eval=8, n_heldout=4, seed=0))
    tasks = ts.eval + ts.heldout
    episodes = []
    for arm, skill in (("base", 0.4), ("sft", 0.7), ("teacher_eval", 0.95)):
        run_rollouts_sync(tasks, arm, 2, oracle_endpoint(skill=skill, seed=3), AgentSettings(max_steps=8), "integ",
                          on_episode=episodes.append, progress=False)
    out = tmp_path_factory.mktemp("integ")
    report = build_report(ReportInputs(episodes=episodes, tasks=ts.tasks, splits=ts.splits, ledger=ts.ledger, n_boot=1000,
                                       lineage={"task_set_digest": ts.provenance.model_dump_json()[:40]}), out)
    return ts, episodes, report, out


def test_numbers_agree_with_the_episodes(real_run):
    ts, episodes, report, _ = real_run
    for arm in ("base", "sft", "teacher_eval"):
        mine = [e for e in episodes if e.arm == arm]
        m = report.numbers.arms[arm]
        assert m.n_rows == len(mine) == 24 and m.pass_rate.successes == sum(e.passed for e in mine)
        assert m.rows_with_tool_calls == sum(e.n_tool_calls > 0 for e in mine)
        assert report.numbers.first_action[arm].n == 24
    assert report.numbers.paired.n_tasks == 12 and report.numbers.paired.trials_b == 2
    assert set(report.numbers.per_split) == {"eval", "heldout"} and set(report.numbers.paired_by_split) == {"eval", "heldout"}
    # the near-perfect oracle starts almost every episode with the oracle's own first call
    assert report.numbers.first_action["teacher_eval"].args_match.rate >= 0.8


def test_ledger_rows_from_the_task_set_and_files(real_run):
    ts, _, report, out = real_run
    assert [e.family for e in report.ledger] == [r.family for r in ts.ledger]
    assert all(e.n == r.tasks for e, r in zip(report.ledger, ts.ledger, strict=True))
    assert (out / "report.html").stat().st_size > 10_000 and report.headline in (out / "report.md").read_text()
    meta = report_metadata(report)
    assert meta["numbers"]["sft.rows"] == 24 and meta["verdict"] == report.numbers.verdict
