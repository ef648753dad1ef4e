"""The on-policy stage's reverse_kl kind in the real asset graph, materialized in-process on a tiny run: the offline
tiny teacher built from the run's teacher SFT rows, two rounds of temperature-1 play and reverse-KL training from the
SFT adapter, the curve under `<run_id>:onpolicy`, and the onpolicy eval arm."""

import dagster as dg
import pytest

from env0_posttrain.defs.assets import RUN_ASSETS
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.runspec import parse_spec, write_spec
from env0_posttrain.store import Store
from env0_posttrain.tasks import starter_template_ids
from env0_posttrain.util.paths import Paths

pytestmark = pytest.mark.slow
RUN = "tiny-onpolicy-rkl"


def _tiny_spec():
    return parse_spec(
        {
            "run_id": RUN,
            "tasks": {"n_train": 12, "n_eval": 4, "seed": 3, "templates": starter_template_ids(max_calls=1)},
            "teacher": {"skill": 0.9, "concurrency": 8, "min_pass_rate": 0.2},
            "student": {"model": "tiny-qwen3", "pretrain_steps": 30,
                        "corpus": {"short_repeats": 0, "copy_drills": 0, "repeat_drills": 0, "directory_repeats": 0,
                                   "practice_calls": 0}},
            "lora": {"r": 8, "alpha": 16, "learning_rate": 3e-2, "max_seq_length": 1024, "per_device_batch_size": 4,
                     "grad_accumulation": 1, "max_steps": 6, "logging_steps": 1, "save_steps": 6, "eval_fraction": 0.1},
            "eval": {"trials": 1, "max_steps": 3, "max_tokens": 24, "concurrency": 12},
            "onpolicy": {"kind": "reverse_kl", "rounds": 2, "tasks_per_round": 4, "steps_per_round": 2,
                         "episodes_per_step": 2, "learning_rate": 5e-3,
                         "tiny_teacher": {"hidden_size": 96, "num_layers": 3, "num_heads": 4, "num_kv_heads": 2,
                                          "intermediate_size": 192, "train_steps": 10, "batch_size": 4,
                                          "max_seq_len": 512}},
        },
        "tiny",
    )


def test_reverse_kl_stage_trains_rounds_against_the_tiny_teacher(tmp_path):
    paths = Paths.from_env(tmp_path)
    write_spec(_tiny_spec(), paths.runs)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("run_id", [RUN])
    resources = {"env0": Env0Resource(data_dir=str(tmp_path)), "pipes_client": dg.PipesSubprocessClient()}
    selection = dg.AssetSelection.assets("onpolicy_eval_trajectories").upstream()
    result = dg.materialize(RUN_ASSETS, partition_key=RUN, instance=instance, resources=resources, selection=selection)
    assert result.success
    checks = {(c.asset_key.to_user_string(), c.check_name): c.passed for c in result.get_asset_check_evaluations()}
    assert checks[("onpolicy_adapter", "onpolicy_adapter_trained")] is True
    store = Store(paths.db)
    training, sft = store.latest_training(f"{RUN}:onpolicy"), store.latest_training(RUN)
    assert training["revision"] != sft["revision"] and training["result"]["kind"] == "reverse_kl"
    rounds = training["result"]["rounds"]
    assert [r["round"] for r in rounds] == [1, 2] and all(r["episodes"] == 4 and r["steps"] == 2 for r in rounds)
    for r in rounds:
        assert r["tokens_scored"] > 0 and r["teacher_errors"] == 0 and r["episodes_trained"] >= 1
        assert r["reverse_kl_before"] == r["reverse_kl_before"] and r["reverse_kl_after"] == r["reverse_kl_after"]
    assert [m["step"] for m in store.training_metrics(training["train_id"])] == [1, 2, 3, 4]  # one curve over rounds
    assert len(list(paths.models.glob("tiny-teacher-*"))) == 1  # built once, beside the tiny student
    assert store.count_episodes(RUN, "onpolicy") == 4  # the arm's eval: 4 eval tasks x 1 trial
