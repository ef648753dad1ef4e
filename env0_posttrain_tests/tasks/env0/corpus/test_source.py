"""A run spec's `tasks.source`: a folder of env0 packages becomes the task set (split, hashed, gated), the offline
oracle teacher replays each package's recorded solve.sh calls in-process, the package's own tests/test.sh scores
the episodes, and SFT rows come out, all through the real asset graph (dagster.materialize, in-process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.stages.context import StageContext, load_tasks
from env0_posttrain.defs.assets import sft_rows, task_set, teacher_eval_trajectories, teacher_trajectories
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import SpecError, TaskSelection, parse_spec, write_spec
from env0_posttrain.store import Store
from env0_posttrain.tasks import build_workspace, make_task_set, split_overlap, verify
from env0_posttrain.tasks.env0.package.load import Env0Error
from env0_posttrain.tasks.env0.run.runner import run_and_record
from env0_posttrain.tasks.env0.judge.verifier import action_log
from env0_posttrain.tasks.task_paths import TaskPaths
from env0_posttrain_tests.sft.test_support import tiny_tokenizer
from env0_posttrain_tests.support.paths import FIXTURES

ENV0 = FIXTURES / "env0_root"  # a stand-in env0 checkout (gcal seed packs, default Slack)
pytestmark = pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None,
                                reason="env0 packages' scripts need bash and curl")
RUN = "env0-source"


def _copy(src: str, dst: Path, note: str | None) -> Path:
    shutil.copytree(FIXTURES / src, dst)
    if note:  # a distinct instruction: two packages the student would read alike are one task to the overlap gate
        (dst / "instruction.md").write_text((dst / "instruction.md").read_text().strip() + f" ({note})\n")
    return dst


@pytest.fixture()
def source(tmp_path: Path, monkeypatch) -> Path:
    """Three invoice packages (gmail + slack) and the archive package (drive + docs + calendar, env0 seed packs);
    the stages of a run read the user's ENV0_ROOT when the spec names no env0.root."""
    monkeypatch.setenv("ENV0_ROOT", str(ENV0))
    src = tmp_path / "corpus"
    src.mkdir()
    for i in (1, 2, 3):
        _copy("env0_invoice", src / f"invoice-{i}", f"batch {i}")
    _copy("env0_archive", src / "archive", None)
    (src / "_manifests").mkdir()  # not a package: skipped
    return src


def test_task_set_from_env0_packages_split_hashed_and_gated(source: Path, tmp_path: Path) -> None:
    cache = tmp_path / "imports"
    ts = make_task_set(TaskSelection(source=source, n_train=3, n_eval=1, seed=5), import_cache=cache, env0_root=ENV0)
    assert len(ts.train) == 3 and len(ts.eval) == 1 and split_overlap(ts) == []
    by_pkg = {t.recipe.items["package"]: t for t in ts.tasks}
    assert set(by_pkg) == {"invoice-1", "invoice-2", "invoice-3", "archive"}
    inv, arc = by_pkg["invoice-1"], by_pkg["archive"]
    assert inv.template_id == "env0" and inv.family == "multi-app" and inv.oracle_reward == 1.0 and inv.noop_reward == 0.0
    # the oracle is what solve.sh did through gws and curl, by our tool names
    assert [c.name for c in inv.oracle] == ["gmail_messages_list", "gmail_messages_send", "slack_conversations_list",
                                            "slack_chat_postMessage"]
    assert {"gmail_messages_send", "gmail_labels_create", "slack_chat_postMessage"} <= set(inv.tools)
    assert not any(n.startswith(("drive_", "calendar_")) for n in inv.tools)  # only the declared services' tools
    assert "drive_comments_create" in arc.tools and arc.oracle_reward == 1.0
    assert len({t.content_digest() for t in ts.tasks}) == 4 and ts.digests == {t.id: t.content_digest() for t in ts.tasks}
    # imports are cached: the same set again, and other seeds split the same tasks differently
    assert make_task_set(TaskSelection(source=source, n_train=3, n_eval=1, seed=5), import_cache=cache, env0_root=ENV0) == ts
    evals = {make_task_set(TaskSelection(source=source, n_train=3, n_eval=1, seed=s), import_cache=cache,
                           env0_root=ENV0).eval[0].id for s in range(6, 12)}
    assert len(evals) > 1


def test_the_same_package_twice_is_one_task_and_the_set_says_it_is_short(tmp_path: Path) -> None:
    src = tmp_path / "corpus"
    src.mkdir()
    _copy("env0_invoice", src / "a", None)
    _copy("env0_invoice", src / "b", None)
    with pytest.raises(ValueError, match="asked for 2 tasks.*give 1 usable") as err:
        make_task_set(TaskSelection(source=src, n_train=1, n_eval=1, seed=0))
    assert "same package files" in str(err.value)


def test_the_ledger_counts_drawn_used_and_dropped_packages_by_family_and_reason(tmp_path: Path) -> None:
    src = tmp_path / "corpus"
    src.mkdir()
    _copy("env0_invoice", src / "a", None)
    _copy("env0_invoice", src / "b", None)  # the same files as a
    _copy("env0_invoice", src / "c", "batch c")
    (_copy("env0_invoice", src / "d", "batch d") / "solution" / "solve.sh").write_text("#!/usr/bin/env bash\ntrue\n")
    toml = _copy("env0_invoice", src / "e", "batch e") / "task.toml"
    toml.write_text(toml.read_text().replace('"mock-gmail", "mock-slack"', '"mock-gmail"'))  # a mail package
    # seed 11 reads every package before the second keep: b, a, e, d, c
    ts = make_task_set(TaskSelection(source=src, families=["multi-app"], n_train=1, n_eval=1, seed=11))
    assert sorted(t.recipe.items["package"] for t in ts.tasks) == ["b", "c"]
    rows = {r.family: r for r in ts.ledger}
    assert set(rows) == {"multi-app", "mail"}
    multi, mail = rows["multi-app"], rows["mail"]
    assert (multi.tasks, multi.used, multi.dropped) == (3, 2, 2)  # b, a, c scored; b, c used; a and d dropped
    assert multi.dropped_reasons == {"record oracle: solve.sh made no successful API call": 1,
                                     "same package files as a task already taken": 1}  # no package path in a reason
    assert (mail.tasks, mail.used, mail.dropped) == (0, 0, 1)
    assert mail.dropped_reasons == {"family mail is not in tasks.families": 1}
    assert sum(r.used for r in ts.ledger) == len(ts.tasks) and sum(r.dropped for r in ts.ledger) == len(ts.dropped)


def test_distinct_packages_sharing_an_instruction_are_distinct_tasks(tmp_path: Path) -> None:
    src = tmp_path / "corpus"
    src.mkdir()
    _copy("env0_invoice", src / "a", None)
    (_copy("env0_invoice", src / "b", None) / "data" / "note.txt").write_text("another company's needle\n")
    ts = make_task_set(TaskSelection(source=src, n_train=1, n_eval=1, seed=0), env0_root=ENV0)
    assert len({t.instruction for t in ts.tasks}) == 1 and len(ts.tasks) == 2
    assert split_overlap(ts) == []  # the shared wording is the ledger's to report, not a contamination failure


def test_the_packages_own_verifier_judges_partial_work_and_a_changed_package_is_refused(source: Path) -> None:
    ts = make_task_set(TaskSelection(source=source, families=["multi-app"], n_train=1, n_eval=1, seed=1), env0_root=ENV0)
    task = next(t for t in ts.tasks if t.recipe.items["package"].startswith("invoice"))
    paths = TaskPaths(ENV0, source)
    start = build_workspace(task, paths)
    end = start.fork()
    for call in task.oracle[:2]:  # the email, not the Slack post: the fixture's verifier gives 0.5
        end.call(call.name, call.arguments)
    log = action_log(end)  # the agent's calls as the HTTP requests they stand for: verifiers read query strings
    assert [(e["method"], e["path"].split("?")[0]) for e in log["gmail"]] == [
        ("GET", "/gmail/v1/users/me/messages"), ("POST", "/gmail/v1/users/me/messages/send")]
    assert "q=subject%3AInvoice+4471" in log["gmail"][0]["path"] and log["slack"] == []
    result = verify(task, start, end, None, paths)
    assert result.reward == 0.5 and json.loads(result.detail)["metrics"]["emailed_ap"] is True
    (source / task.recipe.items["package"] / "instruction.md").write_text("Something else.\n")
    with pytest.raises(Env0Error, match="check package"):
        build_workspace(task, paths)


def test_spec_refuses_template_settings_with_a_source(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="templates, n_heldout"):
        parse_spec({"run_id": "x", "tasks": {"source": str(tmp_path), "templates": ["a"], "n_heldout": 1}}, "spec.yaml")


@pytest.mark.slow
def test_env0_corpus_through_task_set_teacher_sft_and_eval(source: Path, tmp_path: Path) -> None:
    root = tmp_path / "data"
    paths = Paths.from_env(root)
    student = root / "student"
    tiny_tokenizer().save_pretrained(student)  # the student's tokenizer is all sft_rows needs
    spec = parse_spec({
        "run_id": RUN,
        "tasks": {"source": str(source), "n_train": 3, "n_eval": 1, "seed": 2},
        "teacher": {"skill": 1.0, "concurrency": 2, "min_pass_rate": 1.0},
        "student": {"model": str(student)},
        "lora": {"max_seq_length": 32768},
        "eval": {"trials": 1},
    }, RUN)
    write_spec(spec, paths.runs)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("run_id", [RUN])
    assets = [task_set, teacher_trajectories, sft_rows, teacher_eval_trajectories]
    result = dg.materialize(assets, partition_key=RUN, instance=instance,
                            resources={"env0": Env0Resource(data_dir=str(root))})
    assert result.success
    checks = {(c.asset_key.to_user_string(), c.check_name): c.passed for c in result.get_asset_check_evaluations()}
    assert checks[("task_set", "split_disjoint")] and checks[("sft_rows", "rows_valid")]
    assert checks[("sft_rows", "expected_row_count")] and checks[("teacher_trajectories", "teacher_pass_rate_floor")]

    store = Store(paths.db)
    ctx = StageContext.load(RUN, paths)
    tasks = {t.id: t for t in load_tasks(ctx, ("train", "eval"))}
    teacher = store.load_episodes(store.latest_round(RUN, "teacher"))
    assert len(teacher) == 3
    for ep in teacher:  # each oracle episode scores what the package's verifier gives solve.sh run for real
        task = tasks[ep.task_id]
        direct = run_and_record(source / task.recipe.items["package"], oracle=True, env0_root=ENV0)
        assert ep.verifier is not None and ep.reward == direct.reward == 1.0
        assert json.loads(ep.verifier.detail)["reward"] == 1.0
        assert ep.n_tool_calls == len(task.oracle) and ep.stop_condition == "agent_completed"
    evals = store.load_episodes(store.latest_round(RUN, "teacher_eval"))
    assert len(evals) == 1 and evals[0].reward == 1.0 and tasks[evals[0].task_id].recipe.items["package"]
    rows = store.load_sft_rows(RUN)
    assert len(rows) >= 3 and any(m.get("tool_calls") for r in rows for m in r["messages"])
