"""The asset graph with two named eval suites (built-in generator, seen training tasks) and no random eval split:
every arm plays each suite as its own round, the report has one table and one boundary ledger per suite, and one
suite's eval of one arm is played again alone, upstream and the other suite untouched."""

from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.defs.assets import RUN_ASSETS
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec, write_spec
from env0_posttrain.store import Store
from env0_posttrain.tasks import starter_template_ids

pytestmark = pytest.mark.slow
RUN = "tiny-suites"


def _spec():
    return parse_spec({
        "run_id": RUN,
        "tasks": {"n_train": 12, "n_eval": 0, "seed": 3, "templates": starter_template_ids(max_calls=1)},
        "teacher": {"skill": 0.9, "concurrency": 8, "min_pass_rate": 0.2},
        "student": {"model": "tiny-qwen3", "pretrain_steps": 10,
                    "corpus": {"short_repeats": 0, "copy_drills": 0, "repeat_drills": 0, "directory_repeats": 0,
                               "practice_calls": 0}},
        "lora": {"r": 8, "alpha": 16, "learning_rate": 3e-2, "max_seq_length": 1024, "per_device_batch_size": 4,
                 "grad_accumulation": 1, "max_steps": 4, "logging_steps": 1, "save_steps": 4, "eval_fraction": 0.0},
        "eval": {"trials": 2, "max_steps": 2, "max_tokens": 16, "concurrency": 12},
        "suites": [{"name": "fresh", "kind": "generated", "sample": 4, "seed": 9, "exclude_train": True, "trials": 1},
                   {"name": "seen", "kind": "seen", "sample": 5}],
    }, "tiny")


@pytest.fixture(scope="module")
def suites_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    paths = Paths.from_env(root)
    write_spec(_spec(), paths.runs)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("run_id", [RUN])
    resources = {"env0": Env0Resource(data_dir=str(root)), "pipes_client": dg.PipesSubprocessClient()}
    result = dg.materialize(RUN_ASSETS, partition_key=RUN, instance=instance, resources=resources)
    return paths, instance, resources, result


def _episodes(store: Store, round_arm: str) -> int:
    """Episodes of the newest round stored under `arm@suite` (the episodes themselves carry the plain arm)."""
    rid = store.latest_round(RUN, round_arm)
    return len(store.load_episodes(rid)) if rid else 0


def _rounds(store: Store, arm: str) -> list[str]:
    return [r["round_id"] for r in store.rounds(RUN, arm)]


def test_each_suite_is_played_by_each_arm_and_reported(suites_run):
    paths, _, _, result = suites_run
    assert result.success
    store = Store(paths.db)
    for arm in ("base", "sft", "teacher_eval"):
        assert _episodes(store, f"{arm}@fresh") == 4  # 4 tasks x 1 trial (the suite's own trials)
        assert _episodes(store, f"{arm}@seen") == 10  # 5 tasks x eval.trials 2
        assert not _rounds(store, arm)  # no tasks.n_eval split, so no plain-arm round
    md = (Path(store.latest_report(RUN)["report_dir"]) / "report.md").read_text()
    assert "### Suite fresh (generated, unseen)" in md and "### Suite seen (seen, seen)" in md
    assert md.count("Boundary with the training set") == 2
    assert "SFT rows: none of this suite's 5 training tasks lost its row" in md  # counted, even when zero
    assert "Budget: base, sft, rl: 16 tokens per call is below the oracle's longest call" in md
    headline = store.latest_report(RUN)["headline"]
    assert "fresh" in headline and "seen: training tasks" in headline
    assert "generalization" not in headline.replace("not generalization", "")


def test_one_suite_of_one_arm_rematerializes_alone(suites_run):
    paths, instance, resources, _ = suites_run
    store = Store(paths.db)
    before = {k: _rounds(store, k) for k in ("teacher", "base@fresh", "base@seen", "sft@fresh")}
    steps = store.count_training_steps(RUN)
    result = dg.materialize(
        RUN_ASSETS, selection=dg.AssetSelection.assets("base_eval_trajectories"), partition_key=RUN, instance=instance,
        resources=resources, run_config={"ops": {"base_eval_trajectories": {"config": {"suites": ["fresh"]}}}})
    assert result.success
    assert len(_rounds(store, "base@fresh")) == len(before["base@fresh"]) + 1  # a new round of that suite only
    for key in ("teacher", "base@seen", "sft@fresh"):
        assert _rounds(store, key) == before[key]
    assert store.count_training_steps(RUN) == steps
    bad = dg.materialize(
        RUN_ASSETS, selection=dg.AssetSelection.assets("base_eval_trajectories"), partition_key=RUN, instance=instance,
        resources=resources, run_config={"ops": {"base_eval_trajectories": {"config": {"suites": ["nope"]}}}},
        raise_on_error=False)
    assert not bad.success


def test_the_cli_path_replays_one_suite_of_one_arm(suites_run):
    from env0_posttrain.orchestration.launch import materialize_run

    paths, instance, _, _ = suites_run
    store = Store(paths.db)
    before = {k: _rounds(store, k) for k in ("sft@seen", "sft@fresh", "base@seen")}
    result = materialize_run(RUN, paths, instance, ["sft_eval_trajectories"], log_level="INFO", suites=["seen"])
    assert result.success
    assert len(_rounds(store, "sft@seen")) == len(before["sft@seen"]) + 1
    assert _rounds(store, "sft@fresh") == before["sft@fresh"] and _rounds(store, "base@seen") == before["base@seen"]
