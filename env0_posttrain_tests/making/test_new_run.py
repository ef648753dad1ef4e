"""Runs made from the Launchpad: the `new_run` and `teacher_backfill` jobs check and write specs exactly as `run new`
and `backfill` do (one code path, making/new_run.py), a wrong teacher or a misspelt field is refused naming the field,
a partition without a spec is refused in one line, and a backfill clone's report refreshes its source's teacher
table. Jobs run in process against an ephemeral instance."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from env0_posttrain.cli.main import app
from env0_posttrain.definitions import defs
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.sensors import REFRESH_TAG, teacher_table_sensor
from env0_posttrain.spec.runspec import load_spec
from env0_posttrain.util.paths import Paths

runner = CliRunner()
SMALL = ["tasks.n_train=3", "tasks.n_eval=1", "tasks.families=[calendar]"]


@pytest.fixture
def data(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("ENV0_DATA_DIR", str(tmp_path))  # the code location's env0 resource reads it
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return tmp_path


def _launch(job: str, instance: dg.DagsterInstance, **config) -> dg.ExecuteInProcessResult:
    op = {"new_run": "write_run_spec", "teacher_backfill": "launch_teacher_backfill"}[job]
    return defs.resolve_job_def(job).execute_in_process(run_config={"ops": {op: {"config": config}}},
                                                        instance=instance, raise_on_error=False)


def _refused(job: str, instance: dg.DagsterInstance, **config) -> str:
    """The project's line of a config refused while Dagster processes the run config (as the webserver does at
    Launch, before it creates a run); no run was created."""
    before = len(instance.get_runs())
    with pytest.raises(dg.DagsterInvalidConfigError) as err:
        _launch(job, instance, **config)
    assert len(instance.get_runs()) == before
    text = str(err.value)
    return text.split("PostProcessingError: ", 1)[1].splitlines()[0]


def _failure(result: dg.ExecuteInProcessResult) -> str:
    (event,) = [e for e in result.all_events if e.is_step_failure]
    return event.step_failure_data.user_failure_data.description


def test_the_new_run_job_writes_the_spec_run_new_writes_and_registers_the_partition(data: Path, tmp_path_factory):
    with dg.DagsterInstance.ephemeral() as instance:
        result = _launch("new_run", instance, run_id="ui-run", preset="demo", overrides=SMALL,
                         teacher="env0-oracle/oracle@0.7")
        assert result.success and instance.get_dynamic_partitions("run_id") == ["ui-run"]
    (materialization,) = [e for e in result.all_events if e.event_type_value == "STEP_OUTPUT"]
    cli_root = tmp_path_factory.mktemp("cli")
    out = runner.invoke(app, ["run", "new", "ui-run", "--preset", "demo", "--teacher", "env0-oracle/oracle@0.7",
                              *[a for s in SMALL for a in ("--set", s)], "--data-dir", str(cli_root)])
    assert out.exit_code == 0, out.output
    made = Paths.from_env(data).runs / "ui-run.yaml"
    assert made.read_text() == (cli_root / "runs" / "ui-run.yaml").read_text()  # byte for byte what `run new` writes
    assert load_spec(made).teacher.model == "env0-oracle/oracle@0.7" and load_spec(made).tasks.n_train == 3
    meta = materialization.event_specific_data.metadata
    assert meta["spec"].url.endswith("/runs/ui-run.yaml") and "n_train: 3" in meta["spec_yaml"].md_str


@pytest.mark.parametrize("config, words", [
    ({"teacher": "env0-orcale/oracle"}, ["run 'r1': teacher.model: litellm cannot route 'env0-orcale/oracle'",
                                         "did you mean 'env0-oracle'?"]),
    ({"teacher": "openai/gpt-4o-mnii"}, ["teacher.model: openai has no model 'gpt-4o-mnii'",
                                         "did you mean 'gpt-4o-mini'?"]),
    ({"overrides": ["tasks.n_trian=5"]}, ["run 'r1': invalid run spec: tasks.n_trian: unknown field; "
                                          "did you mean `tasks.n_train`?"]),
    ({"overrides": ["lora.r=0"]}, ["invalid run spec: lora.r: Input should be greater than or equal to 1"]),
    ({"overrides": ["tasks.templates=null", "tasks.source=/no/such/dir"]},
     ["run 'r1': tasks.source: /no/such/dir is not a directory"]),
])
def test_a_spec_that_cannot_run_is_refused_at_launch_in_one_line_naming_the_field_and_nothing_is_written(
        data: Path, config, words):
    with dg.DagsterInstance.ephemeral() as instance:
        line = _refused("new_run", instance, run_id="r1", **config)  # the demo preset, as `run new` defaults
        assert instance.get_dynamic_partitions("run_id") == []
    assert all(w in line for w in words), line
    assert not (data / "runs" / "r1.yaml").exists()
    cli = runner.invoke(app, ["run", "new", "r1", *(["--teacher", config["teacher"]] if "teacher" in config else []),
                              *(["--preset", config["preset"]] if "preset" in config else []),
                              *[a for s in config.get("overrides", []) for a in ("--set", s)], "--data-dir", str(data)])
    assert cli.exit_code == 2 and line in cli.output  # the command line says the very same line


def test_a_missing_key_variable_is_a_warning_naming_teacher_api_key_env(data: Path):
    with dg.DagsterInstance.ephemeral() as instance:
        result = _launch("new_run", instance, run_id="remote", teacher="openai/gpt-4o-mini",
                         overrides=["teacher.api_key_env=ENV0_TEST_NO_SUCH_KEY"])
        assert result.success  # the process that plays the run may have the key
        warnings = [e.message for e in instance.all_logs(result.run_id) if e.level == 30]
    assert any("teacher.api_key_env: the environment variable ENV0_TEST_NO_SUCH_KEY is not set" in w for w in warnings)
    cli = runner.invoke(app, ["run", "new", "remote2", "--teacher", "openai/gpt-4o-mini", "--data-dir", str(data)])
    assert cli.exit_code == 0 and "warning: teacher.api_key_env: no key variable named and litellm's default " \
        "OPENAI_API_KEY is not set" in cli.output


def test_a_partition_without_a_spec_is_refused_in_one_line_saying_how_to_make_one(data: Path):
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("run_id", ["orphan"])  # what the UI's "Add a partition" does
        result = defs.resolve_job_def("full_run").execute_in_process(
            instance=instance, partition_key="orphan", raise_on_error=False,
            op_selection=["task_set"])
    line = _failure(result)
    assert line.startswith("run 'orphan' has no spec (") and "the new_run job" in line
    assert "`env0-posttrain run new orphan`" in line and "\n" not in line


def test_the_teacher_backfill_job_clones_per_teacher_out_of_the_nightly_set_and_requests_one_backfill(data: Path):
    with dg.DagsterInstance.ephemeral() as instance:
        assert _launch("new_run", instance, run_id="src", preset="demo",
                       overrides=[*SMALL, "eval.nightly=true"]).success
        result = _launch("teacher_backfill", instance, source_run="src",
                         teachers=["env0-oracle/oracle@0.5", "env0-oracle/oracle@0.9"])
        assert result.success
        (backfill,) = instance.get_backfills()
        clones = ["src--env0-oracle-oracle-0.5", "src--env0-oracle-oracle-0.9"]
        assert sorted(instance.get_dynamic_partitions("run_id")) == ["src", *clones]
        assert backfill.tags == {"env0/backfill": "teachers", "env0/from_run": "src"}
        target = backfill.asset_backfill_data.target_subset
        assert {k.to_user_string() for k in target.asset_keys} >= {"task_set", "comparison_report", "teacher_table"}
        assert sorted(target.get_partitions_subset(dg.AssetKey("task_set")).get_partition_keys()) == clones
        specs = [load_spec(data / "runs" / f"{c}.yaml") for c in clones]
        assert [s.teacher.skill for s in specs] == [0.5, 0.9] and not any(s.eval.nightly for s in specs)
        assert load_spec(data / "runs" / "src.yaml").eval.nightly  # the source stays in the nightly set
        runs = len(instance.get_runs())
        with pytest.raises(dg.DagsterInvalidConfigError, match="teacher 'env0-orcale/x': teacher.model: litellm "
                           "cannot route"):
            _launch("teacher_backfill", instance, source_run="src", teachers=["env0-orcale/x"])
        assert len(instance.get_backfills()) == 1 and len(instance.get_runs()) == runs  # refused before a run


def test_a_clones_report_asks_for_its_sources_teacher_table(data: Path):
    from env0_posttrain.making.new_run import clone_for_teacher, write_clones
    from env0_posttrain.spec.runspec import parse_spec

    source = parse_spec({"run_id": "src"}, "t")
    write_clones(Paths.from_env(data), [source, clone_for_teacher(source, "env0-oracle/oracle@0.4")])
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("run_id", ["src", "src--env0-oracle-oracle-0.4"])
        cursor = [None]

        def tick():  # as the daemon evaluates it, carrying the cursor over
            with dg.partition_loading_context(dynamic_partitions_store=instance), dg.build_sensor_context(
                    instance=instance, resources={"env0": Env0Resource()}, cursor=cursor[0], definitions=defs) as ctx:
                result = teacher_table_sensor.evaluate_tick(ctx)
            cursor[0] = result.cursor
            return result

        instance.report_runless_asset_event(dg.AssetMaterialization("comparison_report",
                                                                    partition="src--env0-oracle-oracle-0.4"))
        (request,) = tick().run_requests
        assert "no report of a teacher backfill clone among the 0 new" in tick().skip_message  # asked once
        instance.report_runless_asset_event(dg.AssetMaterialization("comparison_report", partition="src"))
        assert "among the 1 new reports" in tick().skip_message  # the source's own report
    assert request.partition_key == "src" and teacher_table_sensor.job_name == "teacher_table_refresh"
    assert request.tags[REFRESH_TAG] == "the report of src--env0-oracle-oracle-0.4 (a teacher backfill clone of src) landed"


def test_the_teacher_check_holds_with_custom_providers_registered():
    """A process that has registered litellm custom providers (a harness ran in it) lists them as plain strings."""
    from env0_posttrain.agent.llm import register_provider
    from env0_posttrain.agent.model_check import check_model
    from env0_posttrain.agent.providers.base import Env0Provider

    register_provider("env0-test-registered", Env0Provider())
    (issue,) = check_model("env0-test-registerd/m")
    assert issue.fatal and "did you mean 'env0-test-registered'?" in issue.message
    assert check_model("env0-test-registered/m") == []


def test_the_launchpad_config_refuses_a_bad_run_id_or_preset_before_launch_and_defaults_to_the_demo(data: Path):
    with dg.DagsterInstance.ephemeral() as instance:
        assert "run id 'bad id' " in _refused("new_run", instance, run_id="bad id")
        with pytest.raises(dg.DagsterInvalidConfigError, match="preset"):  # an enum: the Launchpad offers the choices
            _launch("new_run", instance, run_id="r2", preset="no-such-preset")
        assert instance.get_runs() == []
        assert _launch("new_run", instance, run_id="r2").success  # no preset typed: the offline demo
    assert load_spec(data / "runs" / "r2.yaml") == load_spec(_cli_spec(data, "r2", "--preset", "demo"))
    schema = defs.resolve_job_def("new_run").run_config_schema.config_type
    preset = schema.fields["ops"].config_type.fields["write_run_spec"].config_type.fields["config"].config_type \
        .fields["preset"]
    assert preset.default_value == "demo" and {v.config_value for v in preset.config_type.enum_values} >= {"demo",
                                                                                                          "default"}


def _cli_spec(data: Path, run_id: str, *args: str) -> Path:
    other = data / "cli"
    out = runner.invoke(app, ["run", "new", run_id, *args, "--data-dir", str(other)])
    assert out.exit_code == 0, out.output
    return other / "runs" / f"{run_id}.yaml"


def test_force_is_needed_to_replace_a_built_runs_spec_and_acts_when_given(data: Path):
    from env0_posttrain.store import Store

    with dg.DagsterInstance.ephemeral() as instance:
        assert _launch("new_run", instance, run_id="built", overrides=SMALL).success
        Store(Paths.from_env(data).db).start_training("built")  # the run has built something
        line = _refused("new_run", instance, run_id="built", overrides=["tasks.n_train=4"])
        assert "already has a different spec and built training runs" in line and "force: true" in line
        assert _launch("new_run", instance, run_id="built", overrides=["tasks.n_train=4"], force=True).success
    assert load_spec(data / "runs" / "built.yaml").tasks.n_train == 4


def test_nightly_on_a_backfill_makes_clones_of_a_source_that_is_not_nightly_nightly_or_refuses_why(data: Path):
    from env0_posttrain.defs.schedules import nightly_suites

    with dg.DagsterInstance.ephemeral() as instance:
        assert _launch("new_run", instance, run_id="plain", overrides=SMALL).success  # not nightly itself
        assert _launch("teacher_backfill", instance, source_run="plain", teachers=["env0-oracle/oracle@0.5"],
                       nightly=True).success
        clone = load_spec(data / "runs" / "plain--env0-oracle-oracle-0.5.yaml")
        assert nightly_suites(clone) == ["eval"]  # the schedule picks it up
        assert _launch("teacher_backfill", instance, source_run="plain", teachers=["env0-oracle/oracle@0.6"]).success
        assert nightly_suites(load_spec(data / "runs" / "plain--env0-oracle-oracle-0.6.yaml")) == []  # without it
        assert _launch("new_run", instance, run_id="noeval", overrides=[*SMALL, "tasks.n_eval=0",
                                                                     "suites=[{name: seen, kind: seen}]"]).success
        line = _refused("teacher_backfill", instance, source_run="noeval", teachers=["env0-oracle/oracle@0.5"],
                        nightly=True)
    assert "nightly: run 'noeval' has no eval split (tasks.n_eval: 0) and no suite marked nightly" in line
    assert not (data / "runs" / "noeval--env0-oracle-oracle-0.5.yaml").exists()


def test_run_new_starts_from_the_demo_preset_as_the_launchpad_does(data: Path):
    from env0_posttrain.making.new_run import build_spec

    out = runner.invoke(app, ["run", "new", "plain", "--data-dir", str(data)])
    assert out.exit_code == 0, out.output
    assert load_spec(data / "runs" / "plain.yaml") == build_spec("plain", "demo")[0]
    assert load_spec(data / "runs" / "plain.yaml") != build_spec("plain", "default")[0]
    text = "".join(runner.invoke(app, ["run", "new", "--help"], env={"COLUMNS": "400"}).output.split())
    assert "demo(offline,minutes:thedefault,asintheUI'snew_runjob)" in text and "[default:demo]" in text
    from env0_posttrain.defs.jobs import NewRunConfig

    assert NewRunConfig.model_fields["preset"].default == "demo"
