"""The trajectory explorer's data files and the notebook dataframes, over a tiny real run in a store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from env0_posttrain.agent.state_diff import MAX_ROWS, MAX_STR, compact_diff
from env0_posttrain.evaluate import frames
from env0_posttrain.evaluate.explorer import task_href, write_explorer
from env0_posttrain.evaluate.statistics import flip_table
from env0_posttrain_tests.support.explorer_run import ARM_SKILLS, RUN_ID, TRIALS, write_tiny_run


def _load(path: Path, callback: str) -> dict:
    text = path.read_text(encoding="utf-8")
    assert text.startswith(callback + "(") and text.endswith(");\n")
    return json.loads(text[len(callback) + 1:-3])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("explorer")
    return write_tiny_run(root), root


@pytest.fixture(scope="module")
def site(run):
    store, root = run
    info = write_explorer(store, RUN_ID, root / "report" / "explorer")
    return info, _load(root / "report" / "explorer" / "data" / "index.js", "explorerIndex")


def test_index_rows_summarise_every_arm_as_the_store_has_it(run, site):
    store, _ = run
    info, index = site
    eps = frames.episodes(store, RUN_ID)
    assert info.tasks == eps["task_id"].nunique() == len(index["tasks"]) and info.episodes == len(eps)
    assert index["arms"] == [a for a, _ in ARM_SKILLS] and index["suites"] == ["eval"]
    assert index["identifiers"]["teacher_model"] == "env0-oracle/oracle"
    fields = index["arm_fields"]
    for row in index["tasks"]:
        for arm, values in row["arms"].items():
            s = dict(zip(fields, values, strict=True))
            mine = eps[(eps.task_id == row["task_id"]) & (eps.arm == arm)]
            assert s["trials"] == TRIALS == len(mine) and s["passes"] == int(mine.passed.sum())
            assert s["mean_reward"] == pytest.approx(mine.reward.mean(), abs=1e-4)
            assert s["format_failures"] == int((mine.format_failures > 0).sum())
        assert row["family"] == row["template_id"].split("_")[0] and row["instruction"]


def test_flips_agree_with_the_reports_flip_table(run, site):
    _, index = site
    eps = frames.episodes(run[0], RUN_ID)

    def trials(arm):
        part = eps[eps.arm == arm].sort_values(["task_id", "trial"])
        return {t: list(g.passed) for t, g in part.groupby("task_id")}

    table = flip_table(trials("base"), trials("sft"))
    assert {r.task_id: r.change for r in table.rows} == {row["task_id"]: row["flip"] for row in index["tasks"]}
    assert table.fail_to_pass  # the fixture has base -> adapter flips to look at


def test_task_files_hold_each_trial_with_its_transcript_verifier_and_diff(run, site):
    store, root = run
    _, index = site
    stored = {(e["arm"], e["task_id"], e["trial"]): e for e in
              (json.loads(r[0]) for r in store.query("SELECT episode_json FROM episodes"))}
    for row in index["tasks"]:
        task = _load(root / "report" / "explorer" / "data" / f"t{row['key']:05d}.js", "explorerTask")
        assert task["task_id"] == row["task_id"] and task["instruction"].startswith(row["instruction"])
        assert len(task["systems"]) == 1  # one system prompt, stored once for every episode of the task
        for arm, views in task["episodes"].items():
            assert [v["trial"] for v in views] == list(range(TRIALS))
            for v in views:
                ep = stored[(arm, row["task_id"], v["trial"])]
                assert len(v["messages"]) == len(ep["messages"]) and len(v["turns"]) == len(ep["exchanges"])
                calls = [c for m in v["messages"] for c in m.get("tool_calls", [])]
                assert [c["name"] for c in calls] == [c["function"]["name"] for m in ep["messages"]
                                                      for c in m.get("tool_calls") or []]
                assert v["verifier"]["checks"] == ep["verifier"]["checks"] and v["reward"] == ep["verifier"]["reward"]
                assert v["workspace_diff"] == ep["workspace_diff"]
                assert all(t["at"] < len(v["messages"]) and v["messages"][t["at"]]["role"] == "assistant"
                           for t in v["turns"] if not t.get("failed"))
                assert "prompt_token_ids" not in json.dumps(v)


def test_a_passing_episode_records_what_it_changed_and_a_no_op_records_nothing(run):
    eps = frames.episodes(run[0], RUN_ID)
    blobs = {(e["arm"], e["task_id"], e["trial"]): e for e in
             (json.loads(r[0]) for r in run[0].query("SELECT episode_json FROM episodes"))}
    passed = eps[eps.passed].iloc[0]
    assert blobs[(passed.arm, passed.task_id, passed.trial)]["workspace_diff"]  # something changed
    idle = eps[eps.n_tool_calls == 0]
    assert len(idle) and all(blobs[(r.arm, r.task_id, r.trial)]["workspace_diff"] == {} for r in idle.itertuples())


def test_compact_diff_keeps_changed_fields_and_cuts_long_values():
    long = "x" * (MAX_STR + 50)
    rows = {f"r{i}": {"id": f"r{i}", "body": long} for i in range(MAX_ROWS + 3)}
    diff = {"gmail": {"messages": {"added": rows, "updated": {
        "m1": {"before": {"id": "m1", "labels": ["INBOX"], "subject": "s"}, "after": {"id": "m1", "labels": ["TRASH"], "subject": "s"}}}}}}
    out = compact_diff(diff)["gmail"]["messages"]
    assert out["updated"] == {"m1": {"labels": {"before": ["INBOX"], "after": ["TRASH"]}}}
    assert len(out["added"]) == MAX_ROWS and out["more"] == {"added": 3}
    assert out["added"]["r0"]["body"].startswith("x" * MAX_STR) and out["added"]["r0"]["body"].endswith(f"({MAX_STR + 50} chars)")


def test_named_suites_and_rounds_the_report_does_not_count(run, tmp_path):
    """A suite's rounds (`arm@suite`) become rows of their own; an unfinished or older round is not shown."""
    store, _ = run
    eps = store.load_episodes(store.latest_round(RUN_ID, "base"))[:2]
    rid = store.open_round(RUN_ID, "base@unseen", "m", 2)
    store.write_episodes(rid, eps)
    store.finish_round(rid, {})
    pending = store.open_round(RUN_ID, "sft@unseen", "m", 9)  # never finished: not shown
    store.write_episodes(pending, eps)
    try:
        from env0_posttrain.store.suites import replace_suites
        from env0_posttrain.tasks.model import Task

        task = next(Task.model_validate_json(j) for _, j in store.load_tasks(RUN_ID) if json.loads(j)["id"] == eps[0].task_id)
        replace_suites(store, RUN_ID, [("unseen", "generator", "d", {}, [task.model_copy(update={"instruction": "in the suite"})])])
        info = write_explorer(store, RUN_ID, tmp_path / "explorer")
        index = _load(tmp_path / "explorer" / "data" / "index.js", "explorerIndex")
        unseen = [r for r in index["tasks"] if r["suite"] == "unseen"]
        assert index["suites"] == ["eval", "unseen"] and [r["task_id"] for r in unseen] == [eps[0].task_id]
        assert list(unseen[0]["arms"]) == ["base"] and unseen[0]["flip"] is None
        assert unseen[0]["family"] == task.family and unseen[0]["instruction"] == "in the suite"  # the suite's table
        assert next(r for r in index["tasks"] if r["suite"] == "eval" and r["task_id"] == task.id)["instruction"] == task.instruction
        assert info.tasks == len(index["tasks"])
        both = frames.episodes(store, RUN_ID, latest=False)
        assert set(both.suite) == {"eval", "unseen"} and len(both[both.round_id == pending]) == 2
        assert pending not in set(frames.episodes(store, RUN_ID).round_id)
    finally:
        with store.transaction() as con:
            con.execute("DELETE FROM episodes WHERE round_id IN (?, ?)", [rid, pending])
            con.execute("DELETE FROM rounds WHERE round_id IN (?, ?)", [rid, pending])
            con.execute("DELETE FROM suite_tasks")


def test_dataframes_per_level(run):
    store, root = run
    eps = frames.episodes(root / "env0.duckdb", RUN_ID)
    turns, calls = frames.turns(store, RUN_ID), frames.tool_calls(store, RUN_ID)
    assert len(eps) == len(ARM_SKILLS) * TRIALS * eps.task_id.nunique()
    for col in ("arm", "suite", "task_id", "trial", "reward", "round_id", "run_spec_digest", "family", "checks"):
        assert col in eps.columns
    assert set(eps.arm) == {a for a, _ in ARM_SKILLS} and set(eps.suite) == {"eval"}
    assert eps.run_spec_digest.iloc[0] == store.query("SELECT digest FROM runs WHERE run_id = ?", [RUN_ID])[0][0]
    assert len(calls) == eps.n_tool_calls.sum() and len(turns) >= eps.n_turns.sum()
    merged = calls.merge(eps[["round_id", "task_id", "trial", "reward"]], on=["round_id", "task_id", "trial"])
    assert (merged.reward_x == merged.reward_y).all()
    malformed = calls[calls.error.fillna("").str.contains("malformed_call")]
    assert len(malformed) and not malformed.ok.any()
    assert calls.ok.dropna().any()  # most calls succeed
    assert frames.episodes(store, "no-such-run").empty


def test_flip_rows_of_the_report_link_into_the_explorer(tmp_path):
    from env0_posttrain.evaluate import ReportInputs, build_report
    from env0_posttrain_tests.support.evaluate import arm_from_counts, make_task

    assert task_href("a b/c", "s") == "explorer/index.html#task=a%20b%2Fc&suite=s"
    tasks = [make_task(i) for i in range(12)]
    eps = arm_from_counts("base", tasks, 1, 2, shuffle_seed=1) + arm_from_counts("sft", tasks, 1, 9, shuffle_seed=2)
    linked = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=200, explorer="explorer/index.html"),
                          tmp_path / "a")
    plain = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=200), tmp_path / "b")
    flips = linked.numbers.flips.fail_to_pass
    assert flips and all(f"({task_href(t)})" in linked.markdown for t in flips)
    assert "explorer" not in plain.markdown and 'href="explorer/index.html"' in linked.html


def test_paths_under_the_data_dir_become_artifact_urls_in_metadata(monkeypatch):
    """The report asset's explorer, report and plots are links the Dagster UI opens in one click (http://, which
    Chromium follows from the UI, where it refuses file://); a path outside the served folders stays a path."""
    import dagster as dg

    from env0_posttrain.defs.metadata import to_result
    from env0_posttrain.stages.context import StageResult

    monkeypatch.setenv("ENV0_ARTIFACTS_URL", "http://box:4001/")
    root = Path("/data")
    res = to_result(StageResult(metadata={"explorer": root / "artifacts/r 1/report/x/explorer/index.html",
                                          "elsewhere": Path("/r/explorer/index.html")}, data_version="v"),
                    "comparison_report", root)
    assert isinstance(res.metadata["explorer"], dg.UrlMetadataValue)
    assert res.metadata["explorer"].url == "http://box:4001/artifacts/r%201/report/x/explorer/index.html"
    assert isinstance(res.metadata["elsewhere"], dg.PathMetadataValue)
