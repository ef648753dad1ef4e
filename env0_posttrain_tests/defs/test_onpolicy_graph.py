"""The on-policy stage in the real asset graph, materialized in-process on a tiny run: the relabel kind end to end
with the offline oracle teacher (play, relabel at the student's states, train; the onpolicy eval arm; the report)."""

import json
import re
from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.defs.assets import RUN_ASSETS
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.runspec import parse_spec, write_spec
from env0_posttrain.store import Store
from env0_posttrain.tasks import starter_template_ids
from env0_posttrain.util.paths import Paths

pytestmark = pytest.mark.slow
RUN = "tiny-onpolicy"


def _tiny_spec():
    return parse_spec(
        {
            "run_id": RUN,
            "tasks": {"n_train": 16, "n_eval": 6, "seed": 3, "templates": starter_template_ids(max_calls=1)},
            "teacher": {"skill": 0.9, "concurrency": 8, "min_pass_rate": 0.2},
            "student": {"model": "tiny-qwen3", "pretrain_steps": 30,
                        "corpus": {"short_repeats": 0, "copy_drills": 0, "repeat_drills": 0, "directory_repeats": 0,
                                   "practice_calls": 0}},
            "lora": {"r": 8, "alpha": 16, "learning_rate": 3e-2, "max_seq_length": 1024, "per_device_batch_size": 4,
                     "grad_accumulation": 1, "max_steps": 6, "logging_steps": 1, "save_steps": 6, "eval_fraction": 0.1},
            "eval": {"trials": 2, "max_steps": 3, "max_tokens": 24, "concurrency": 12},
            "onpolicy": {"kind": "relabel", "rounds": 2, "tasks_per_round": 6, "fresh_tasks": 8, "steps_per_round": 3,
                         "learning_rate": 1e-2, "logging_steps": 1, "per_device_batch_size": 4},
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
    return paths, result


def test_onpolicy_stage_trains_rounds_and_the_report_compares_its_arm(graph_run):
    paths, result = graph_run
    assert result.success
    checks = {(c.asset_key.to_user_string(), c.check_name): c.passed for c in result.get_asset_check_evaluations()}
    assert checks[("onpolicy_adapter", "onpolicy_adapter_trained")] is True
    assert checks[("onpolicy_eval_trajectories", "no_unscored_rows")] is True
    store = Store(paths.db)
    training = store.latest_training(f"{RUN}:onpolicy")
    sft = store.latest_training(RUN)
    assert training["revision"] != sft["revision"]  # the SFT adapter stays the run's own training
    rounds = training["result"]["rounds"]
    assert [r["round"] for r in rounds] == [1, 2] and all(r["episodes"] == 6 for r in rounds)
    for r in rounds:  # every assistant turn was relabelled: a row, or a counted teacher error
        assert r["turns"] >= r["episodes"] and r["rows_new"] + r["teacher_errors"] + r["rows_not_rendered"] == r["turns"]
        assert 0.0 <= r["teacher_agreement"] <= 1.0 and r["steps"] == 3 and r["tokens_trained"] > 0
    assert rounds[1]["rows_trained"] == rounds[0]["rows_new"] + rounds[1]["rows_new"]  # earlier rounds' rows kept
    art = Path(training["adapter_path"]).parents[2]
    fresh = [json.loads(line) for line in (art / "fresh_tasks.jsonl").read_text().splitlines()]
    stored = {json.loads(task)["id"] for _, task in store.load_tasks(RUN)}
    assert training["result"]["fresh_tasks"] == len(fresh) == 8 and not {t["id"] for t in fresh} & stored
    logged = store.training_metrics(training["train_id"])
    assert [m["step"] for m in logged] == list(range(1, 7))  # one curve over both rounds
    assert store.count_episodes(RUN, "onpolicy") == 12  # 6 eval tasks x 2 trials; training episodes are not evals
    relabelled = [json.loads(line) for line in (art / "round-1" / "relabelled.jsonl").read_text().splitlines()]
    assert len(relabelled) == rounds[0]["turns"]
    assert list(art.rglob("events.out.tfevents.*"))  # curves: each round's training and the rounds' own figures
    md = (Path(store.latest_report(RUN)["report_dir"]) / "report.md").read_text()
    assert "## On-policy distillation (after SFT)" in md and re.search(r"\|\s*onpolicy vs sft\s*\|", md)
    assert "Teacher-bounded, per family" in md and "onpolicy_adapter_revision" in md
