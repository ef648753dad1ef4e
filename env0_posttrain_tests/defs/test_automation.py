"""The spec sensor and the nightly schedule, evaluated against a real (ephemeral) Dagster instance."""

import datetime as dt
from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.schedules import nightly_eval_schedule
from env0_posttrain.defs.sensors import SpecFilesInvalid, run_spec_sensor
from env0_posttrain.definitions import defs
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec, write_spec


def _specs(root: Path) -> None:
    runs = Paths.from_env(root).runs
    write_spec(parse_spec({"run_id": "nightly-a", "eval": {"nightly": True}}, "a"), runs)
    write_spec(parse_spec({"run_id": "adhoc-b"}, "b"), runs)
    (runs / "broken.yaml").write_text("run_id: broken\nlora: {lerning_rate: 0.1}\n")


def _tick(instance, root: Path):
    return run_spec_sensor(dg.build_sensor_context(instance=instance, resources={"env0": Env0Resource(data_dir=str(root))}))


def test_sensor_registers_valid_specs_and_fails_its_tick_on_a_broken_one_naming_file_line_and_field(tmp_path: Path):
    _specs(tmp_path)
    runs = Paths.from_env(tmp_path).runs
    (runs / "typo.yaml").write_text("run_id: typo\nteacher:\n  model: env0-orcale/oracle\n")
    with dg.instance_for_test() as instance:
        with pytest.raises(SpecFilesInvalid) as err:
            _tick(instance, tmp_path)
        assert sorted(instance.get_dynamic_partitions("run_id")) == ["adhoc-b", "nightly-a"]  # the good ones anyway
        text = str(err.value)
        assert f"{runs / 'broken.yaml'}: invalid run spec: lora.lerning_rate (line 2): unknown field; did you mean `lora.learning_rate`?" in text
        assert f"{runs / 'typo.yaml'}: teacher.model (line 3): litellm cannot route 'env0-orcale/oracle'" in text
        assert "(did you mean 'env0-oracle'?)" in text
        (runs / "broken.yaml").unlink()
        (runs / "typo.yaml").write_text("run_id: typo\nteacher:\n  model: env0-oracle/oracle\n")  # fixed
        result = _tick(instance, tmp_path)
        assert [p for r in result.dynamic_partitions_requests for p in r.partition_keys] == ["typo"]
        instance.add_dynamic_partitions("run_id", ["typo", "orphan"])
        again = _tick(instance, tmp_path)
        assert isinstance(again, dg.SkipReason) and "no new run specs (3 known)" in again.skip_message
        assert "partitions without a spec file: ['orphan'] (the new_run job makes one; the delete_orphan_partitions job" in again.skip_message


def test_nightly_schedule_adds_its_partitions_then_requests_eval_runs(tmp_path: Path):
    _specs(tmp_path)
    dates = {dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")}
    with dg.instance_for_test() as instance:
        assert instance.get_dynamic_partitions("run_id") == []
        # `with`: the context enters an instance of its own, and leaving it un-exited would leave Dagster's
        # current-instance context variable pointing at a disposed one for every later test.
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=dt.datetime(2026, 11, 23, 2, 0),
                                       resources={"env0": Env0Resource(data_dir=str(tmp_path))}) as ctx:
            requests = nightly_eval_schedule(ctx)
        dates.add(dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"))  # the day may have turned meanwhile
        assert instance.get_dynamic_partitions("run_id") == ["nightly-a"]  # added in the body, before the request
        assert [(r.partition_key, r.run_key) for r in requests] == [("nightly-a", "nightly-a-2026-11-23")]
        # the run is tagged with the date it was asked for (a previewed tick simulates another), and the tick's
        assert requests[0].tags["env0/nightly"] in dates and requests[0].tags["env0/nightly_tick"] == "2026-11-23"
        assert {k.to_user_string() for k in requests[0].asset_selection} == {  # no RL arm: its spec has no rl
            "base_eval_trajectories", "sft_eval_trajectories", "comparison_report"}
        # the UI's preview evaluates a tick given in another timezone: the tick tag is still that tick's UTC date
        tick = dt.datetime(2026, 11, 24, 2, 0, tzinfo=dt.timezone.utc).astimezone(dt.timezone(dt.timedelta(hours=-8)))
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=tick,
                                       resources={"env0": Env0Resource(data_dir=str(tmp_path))}) as ctx:
            assert [r.tags["env0/nightly_tick"] for r in nightly_eval_schedule(ctx)] == ["2026-11-24"]
    assert "02:00 UTC" in nightly_eval_schedule.description and "env0/nightly" in nightly_eval_schedule.description
    job = defs.resolve_job_def("nightly_eval")
    assert {k.to_user_string() for k in job.asset_layer.executable_asset_keys} == {
        "base_eval_trajectories", "sft_eval_trajectories", "rl_eval_trajectories", "onpolicy_eval_trajectories",
        "comparison_report"}
