"""The code location's executor leaves out the optional stages a run's spec lacks, whatever launched the run (a
job over every asset, as "Materialize all" and the full_run job are), and refuses before any step what only the
partition's spec can judge. Real runs through Dagster's multiprocess executor on a persistent instance; the assets
are named as the project's, each op named as its asset, as in defs/assets.py."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.dagster_run import DagsterRun

from env0_posttrain.making.presets import preset_data
from env0_posttrain.defs.assets import RECOLLECT_TAG
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.spec_executor import run_problems, spec_stages_executor
from env0_posttrain.spec.runspec import parse_spec, write_spec


def _asset(name: str, deps: list[str], pool: str | None = None) -> dg.AssetsDefinition:
    @dg.asset(name=name, deps=deps, partitions_def=run_partitions, pool=pool)
    def _made(context):
        return dg.MaterializeResult(metadata={"partition": context.partition_key})

    return _made


ASSETS = [_asset("lora_adapter", []), _asset("rl_adapter", ["lora_adapter"], pool="gpu"),
          _asset("rl_eval_trajectories", ["rl_adapter"], pool="student_inference"),
          _asset("comparison_report", ["lora_adapter", "rl_eval_trajectories"])]


def every_asset_job() -> dg.JobDefinition:
    """Every asset of the graph in one run, as the UI's "Materialize all" launches it."""
    return dg.Definitions(assets=ASSETS, jobs=[dg.define_asset_job("every_asset", partitions_def=run_partitions)],
                          executor=spec_stages_executor).resolve_job_def("every_asset")


def _spec(data: Path, run_id: str, preset: str) -> None:
    write_spec(parse_spec(preset_data(preset, run_id), run_id), data / "runs")


def _run(instance: dg.DagsterInstance, run_id: str, tags: dict | None = None) -> dg.ExecuteJobResult:
    instance.add_dynamic_partitions(run_partitions.name, [run_id])
    with dg.execute_job(dg.reconstructable(every_asset_job), instance,
                        tags={"dagster/partition": run_id, **(tags or {})}, raise_on_error=False) as result:
        return result


def _materialized(instance: dg.DagsterInstance, run_id: str) -> set[str]:
    return {a.key.to_user_string() for a in ASSETS if run_id in instance.get_materialized_partitions(a.key)}


@pytest.fixture
def instance(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("ENV0_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as inst:
        yield inst


@pytest.mark.slow
def test_a_run_without_rl_leaves_its_steps_out_and_the_report_runs(instance, tmp_path: Path):
    _spec(tmp_path / "data", "plain", "demo")
    result = _run(instance, "plain")
    assert result.success
    assert _materialized(instance, "plain") == {"lora_adapter", "comparison_report"}
    events = instance.all_logs(result.run_id)
    by_step = {}
    for e in events:
        if e.is_dagster_event and e.dagster_event.step_key:
            by_step.setdefault(e.dagster_event.step_key, []).append(e.dagster_event.event_type_value)
    for step in ("rl_adapter", "rl_eval_trajectories"):  # planned at launch, then skipped: never started
        assert "STEP_SKIPPED" in by_step[step] and set(by_step[step]) == {"ASSET_MATERIALIZATION_PLANNED", "STEP_SKIPPED"}
    assert "STEP_SUCCESS" in by_step["comparison_report"]
    assert any("rl_adapter, rl_eval_trajectories left out of this run: the spec of run 'plain' has no rl section"
               in (e.user_message or "") for e in events)


@pytest.mark.slow
def test_a_run_with_rl_materializes_every_asset(instance, tmp_path: Path):
    _spec(tmp_path / "data", "with-rl", "demo-rl")
    result = _run(instance, "with-rl")
    assert result.success
    assert _materialized(instance, "with-rl") == {a.key.to_user_string() for a in ASSETS}


@pytest.mark.slow
def test_an_unknown_recollect_arm_refuses_the_run_before_any_step(instance, tmp_path: Path):
    _spec(tmp_path / "data", "plain", "demo")
    result = _run(instance, "plain", {RECOLLECT_TAG: "teacher,techer"})
    assert not result.success
    events = instance.all_logs(result.run_id)
    assert not [e for e in events if e.is_dagster_event and e.dagster_event.event_type_value == "STEP_START"]
    assert any("run 'plain' refused before any step started: tag env0/recollect: ['techer'] cannot be collected "
               "again" in (e.user_message or "") for e in events)


def test_run_problems_name_the_suite_config_and_the_recollect_tag():
    spec = parse_spec({"run_id": "r", "suites": [{"name": "seen", "kind": "seen"}]}, "r")
    run = DagsterRun(job_name="every_asset", run_id="x", tags={RECOLLECT_TAG: "teacher"}, run_config={
        "ops": {"base_eval_trajectories": {"config": {"suites": ["eval", "sen"]}},
                "sft_eval_trajectories": {"config": {"suites": ["seen"]}}}})
    steps = ["base_eval_trajectories", "sft_eval_trajectories"]
    assert run_problems(run, spec, steps) == [
        "ops.base_eval_trajectories.config.suites: run 'r' has no eval suite named ['sen']; its suites: "
        "['eval', 'seen']"]
    assert run_problems(run, spec, ["sft_eval_trajectories"]) == []
    tagged = DagsterRun(job_name="every_asset", run_id="y", tags={RECOLLECT_TAG: "sft"})
    assert run_problems(tagged, spec, steps) == [
        "tag env0/recollect: ['sft'] cannot be collected again; the arms it takes: ['teacher'] (every other arm "
        "plays a new round when materialized)"]
