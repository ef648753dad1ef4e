"""Spec problems show on the asset graph (the spec_files_valid check on task_set, recorded by the spec sensor when
the problems change), and the delete_orphan_partitions job removes partitions with no spec and no data."""

from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.definitions import defs
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.sensors import SpecFilesInvalid, run_spec_sensor
from env0_posttrain.defs.spec_checks import CHECK_KEY
from env0_posttrain.spec.runspec import RunSpec, write_spec
from env0_posttrain.util.paths import Paths


def _latest(instance):
    (record,) = instance.event_log_storage.get_asset_check_execution_history(CHECK_KEY, limit=1)
    return record.event.dagster_event.event_specific_data


def test_a_broken_spec_shows_as_a_failed_check_on_task_set_naming_file_line_and_field(tmp_path: Path):
    runs = Paths.from_env(tmp_path).runs
    write_spec(RunSpec(run_id="good"), runs)
    (runs / "broken.yaml").write_text("run_id: broken\nlora: {lerning_rate: 0.1}\n")
    env0 = Env0Resource(data_dir=str(tmp_path))
    with dg.instance_for_test() as instance:
        for _ in range(2):  # the second tick finds the same problems: no second verdict
            with pytest.raises(SpecFilesInvalid):
                run_spec_sensor(dg.build_sensor_context(instance=instance, resources={"env0": env0}))
        assert len(instance.event_log_storage.get_asset_check_execution_history(CHECK_KEY, limit=5)) == 1
        failed = _latest(instance)
        assert not failed.passed and failed.asset_key == dg.AssetKey("task_set")
        assert f"{runs / 'broken.yaml'}: invalid run spec: lora.lerning_rate (line 2): unknown field" in \
            failed.description
        (runs / "broken.yaml").unlink()
        run_spec_sensor(dg.build_sensor_context(instance=instance, resources={"env0": env0}))
        assert _latest(instance).passed and "every spec file" in _latest(instance).description
    assert CHECK_KEY in defs.resolve_asset_graph().asset_check_keys  # on the graph, executable from the UI too


def test_the_orphan_job_deletes_partitions_without_spec_or_data_and_keeps_the_rest(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("ENV0_DATA_DIR", str(tmp_path))
    write_spec(RunSpec(run_id="has-spec"), Paths.from_env(tmp_path).runs)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("run_id", ["has-spec", "orphan", "orphan-with-data", "typo"])
        instance.report_runless_asset_event(dg.AssetMaterialization("task_set", partition="orphan-with-data"))
        job = defs.resolve_job_def("delete_orphan_partitions")
        refused = job.execute_in_process(instance=instance, raise_on_error=False, run_config={
            "ops": {"delete_orphans": {"config": {"run_ids": ["has-spec", "orphan-with-data", "nope"]}}}})
        (failure,) = [e for e in refused.all_events if e.is_step_failure]
        text = failure.step_failure_data.user_failure_data.description
        assert "nope: no such partition" in text and "has-spec: has a spec file" in text
        assert "orphan-with-data: has materializations" in text
        assert len(instance.get_dynamic_partitions("run_id")) == 4
        one = job.execute_in_process(instance=instance, run_config={
            "ops": {"delete_orphans": {"config": {"run_ids": ["typo"]}}}})
        assert one.output_for_node("delete_orphans") == ["typo"]
        rest = job.execute_in_process(instance=instance)
        assert rest.output_for_node("delete_orphans") == ["orphan"]
        assert sorted(instance.get_dynamic_partitions("run_id")) == ["has-spec", "orphan-with-data"]
