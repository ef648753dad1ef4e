"""The spec sensor and the nightly schedule, evaluated against a real (ephemeral) Dagster instance."""

import datetime as dt
from pathlib import Path

import dagster as dg

from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.schedules import nightly_eval_schedule
from env0_posttrain.defs.sensors import run_spec_sensor
from env0_posttrain.definitions import defs
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec, write_spec


def _specs(root: Path) -> None:
    runs = Paths.from_env(root).runs
    write_spec(parse_spec({"run_id": "nightly-a", "eval": {"nightly": True}}, "a"), runs)
    write_spec(parse_spec({"run_id": "adhoc-b"}, "b"), runs)
    (runs / "broken.yaml").write_text("run_id: broken\nlora: {rank: 8}\n")


def test_sensor_registers_valid_specs_and_skips_broken_ones(tmp_path: Path):
    _specs(tmp_path)
    with dg.instance_for_test() as instance:
        ctx = dg.build_sensor_context(instance=instance, resources={"env0": Env0Resource(data_dir=str(tmp_path))})
        result = run_spec_sensor(ctx)
        added = [p for r in result.dynamic_partitions_requests for p in r.partition_keys]
        assert sorted(added) == ["adhoc-b", "nightly-a"]
        instance.add_dynamic_partitions("run_id", added)
        again = run_spec_sensor(dg.build_sensor_context(instance=instance,
                                                        resources={"env0": Env0Resource(data_dir=str(tmp_path))}))
        assert isinstance(again, dg.SkipReason) and "1 invalid" in again.skip_message


def test_nightly_schedule_adds_its_partitions_then_requests_eval_runs(tmp_path: Path):
    _specs(tmp_path)
    with dg.instance_for_test() as instance:
        assert instance.get_dynamic_partitions("run_id") == []
        # `with`: the context enters an instance of its own, and leaving it un-exited would leave Dagster's
        # current-instance context variable pointing at a disposed one for every later test.
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=dt.datetime(2026, 11, 23, 2, 0),
                                       resources={"env0": Env0Resource(data_dir=str(tmp_path))}) as ctx:
            requests = nightly_eval_schedule(ctx)
        assert instance.get_dynamic_partitions("run_id") == ["nightly-a"]  # added in the body, before the request
        assert [(r.partition_key, r.run_key) for r in requests] == [("nightly-a", "nightly-a-2026-11-23")]
    job = defs.resolve_job_def("nightly_eval")
    assert {k.to_user_string() for k in job.asset_layer.executable_asset_keys} == {
        "base_eval_trajectories", "sft_eval_trajectories", "rl_eval_trajectories", "comparison_report"}
