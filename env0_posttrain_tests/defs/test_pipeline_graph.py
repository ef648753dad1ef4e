"""The real asset graph, materialized in-process on a tiny run: every stage for real, then an
incremental re-materialization that must not re-run the teacher or the training."""

import re
from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.defs.assets import RUN_ASSETS
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec, write_spec
from env0_posttrain.store import Store
from env0_posttrain.util.devices import device_label
from env0_posttrain.tasks import starter_template_ids

pytestmark = pytest.mark.slow
RUN = "tiny-graph"


def _tiny_spec():
    return parse_spec(
        {
            "run_id": RUN,
            "tasks": {"n_train": 24, "n_eval": 6, "seed": 3, "templates": starter_template_ids(max_calls=1)},
            "teacher": {"skill": 0.9, "concurrency": 8, "min_pass_rate": 0.2},
            # 30 steps can only fit the company and the requests: no drills (the learning is benchmarked apart)
            "student": {"model": "tiny-qwen3", "pretrain_steps": 30,
                        "corpus": {"short_repeats": 0, "copy_drills": 0, "repeat_drills": 0, "directory_repeats": 0,
                                   "practice_calls": 0}},
            "lora": {"r": 8, "alpha": 16, "learning_rate": 3e-2, "max_seq_length": 1024, "per_device_batch_size": 4,
                     "grad_accumulation": 1, "max_steps": 12, "logging_steps": 1, "save_steps": 6, "eval_fraction": 0.1},
            "eval": {"trials": 2, "max_steps": 3, "max_tokens": 24, "concurrency": 12},
        },
        "tiny",
    )


@pytest.fixture(scope="module")
def graph_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    paths = Paths.from_env(root)
    write_spec(_tiny_spec(), paths.runs)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("run_id", [RUN])
    resources = {"env0": Env0Resource(data_dir=str(root)), "pipes_client": dg.PipesSubprocessClient()}
    result = dg.materialize(RUN_ASSETS, partition_key=RUN, instance=instance, resources=resources)
    return paths, instance, resources, result


def test_whole_graph_materializes_with_checks_and_report(graph_run):
    paths, _, _, result = graph_run
    assert result.success
    materialized = {e.event_specific_data.materialization.asset_key.to_user_string()
                    for e in result.get_asset_materialization_events()}
    assert materialized == {a.key.to_user_string() for a in RUN_ASSETS}
    for e in result.get_asset_materialization_events():  # data versions: content hashes, so the UI can mark staleness
        assert e.event_specific_data.materialization.tags.get("dagster/data_version")
    checks = {(c.asset_key.to_user_string(), c.check_name): c.passed for c in result.get_asset_check_evaluations()}
    assert checks[("task_set", "split_disjoint")] is True
    assert checks[("sft_rows", "rows_valid")] is True
    assert checks[("base_eval_trajectories", "no_unscored_rows")] is True
    store = Store(paths.db)
    assert store.count_episodes(RUN, "teacher") == 24
    assert store.count_episodes(RUN, "base") == store.count_episodes(RUN, "sft") == 12
    assert store.count_training_steps(RUN) >= 1
    rep = store.latest_report(RUN)
    report_dir = Path(rep["report_dir"])
    assert (report_dir / "report.html").exists() and (report_dir / "report.md").exists()
    assert rep["headline"] in (report_dir / "report.md").read_text()
    # where the student trained and played each arm (student.device: auto = CPU here), and its training curves
    lineage = (report_dir / "report.md").read_text().split("## Lineage")[1]
    cpu = device_label("cpu")  # with the kernels that set the digits: "cpu (AVX512 kernels)"
    assert re.search(r"base_built_on\s*\|\s*" + re.escape(cpu), lineage)
    assert "student_device" in lineage and f"training: {cpu}; base: {cpu}; sft: {cpu}" in lineage
    assert list((paths.artifacts(RUN) / "adapter").rglob("tensorboard/events.out.tfevents.*"))
    art = paths.artifacts(RUN)
    for rel in ("tasks/tasks.jsonl", "teacher/results.jsonl", "sft/prime-sft.jsonl", "sft/trl.jsonl"):
        assert (art / rel).stat().st_size > 0, rel


def test_rematerializing_base_eval_reruns_only_downstream(graph_run):
    paths, instance, resources, _ = graph_run
    store = Store(paths.db)
    teacher_before = store.count_episodes(RUN, "teacher")
    steps_before = store.count_training_steps(RUN)
    trainings_before = store.query("SELECT count(*) FROM training_runs")[0][0]
    rounds_before = {r["round_id"] for r in store.rounds(RUN, "teacher")}
    reports_before = store.query("SELECT count(*) FROM reports")[0][0]

    selection = dg.AssetSelection.assets("base_eval_trajectories").downstream()
    result = dg.materialize(RUN_ASSETS, selection=selection, partition_key=RUN, instance=instance, resources=resources)
    assert result.success
    ran = {e.event_specific_data.materialization.asset_key.to_user_string()
           for e in result.get_asset_materialization_events()}
    assert ran == {"base_eval_trajectories", "comparison_report", "teacher_table"}  # the report assets over the evals
    assert store.count_episodes(RUN, "teacher") == teacher_before
    assert {r["round_id"] for r in store.rounds(RUN, "teacher")} == rounds_before
    assert store.count_training_steps(RUN) == steps_before
    assert store.query("SELECT count(*) FROM training_runs")[0][0] == trainings_before
    assert len(store.rounds(RUN, "base")) == 2  # a new eval round; the first is kept as history
    assert store.query("SELECT count(*) FROM reports")[0][0] == reports_before + 1
