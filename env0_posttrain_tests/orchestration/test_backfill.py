"""Teacher backfills through a real webserver's GraphQL API: specs cloned, partitions registered and a
REQUESTED asset backfill launched, which the instance and GraphQL list, which the daemon runs, and which
writes nothing when it cannot be launched."""

import ast
import logging
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.execution.backfill import BulkActionStatus
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._daemon.backfill import execute_backfill_jobs
from typer.main import get_command
from typer.testing import CliRunner

from env0_posttrain.cli.main import UI_HOST, UI_PORT, app
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.orchestration import backfill as backfill_mod
from env0_posttrain.making.new_run import BackfillError, teacher_run_id, teacher_slug
from env0_posttrain.orchestration.backfill import backfill_teachers
from env0_posttrain.orchestration import ui_graphql
from env0_posttrain.orchestration.ui_graphql import DEFAULT_UI_URL, UiError, UiGraphQL
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, is_valid_run_id, load_spec, write_spec
from env0_posttrain_tests.support import toy_run_assets
from env0_posttrain_tests.support.toy_run_assets import toy_defs
from env0_posttrain_tests.support.webserver import ROOT, dagster_webserver, free_port, write_workspace

TEACHERS = ["openai/gpt-4o-mini", "openrouter/qwen/qwen3-235b:free", "env0-oracle/strong"]
slow = pytest.mark.slow  # the module's webserver (two code locations) takes 15-25 s to start on 2 busy cores
TOY_LOCATION = {"python_module": {"module_name": toy_run_assets.__name__, "attribute": "toy_defs",
                                  "location_name": "toy", "working_directory": str(ROOT)}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One webserver for the module: the repo's code location and the toy one, runs launched in-process
    (only the daemon test launches runs, from its own process)."""
    tmp = tmp_path_factory.mktemp("backfill_server")
    home = tmp / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(yaml.safe_dump({
        "telemetry": {"enabled": False},
        "run_coordinator": {"module": "dagster._core.run_coordinator.sync_in_memory_run_coordinator",
                            "class": "SyncInMemoryRunCoordinator"},
        "run_launcher": {"module": "dagster._core.launcher.sync_in_memory_run_launcher",
                         "class": "SyncInMemoryRunLauncher"},
    }))
    workspace = write_workspace(tmp / "workspace.yaml", [TOY_LOCATION])
    with dagster_webserver(home, workspace=workspace, env={"ENV0_DATA_DIR": str(tmp / "data")}) as url:
        yield url, home


@pytest.fixture(scope="module")
def instance(server):
    _, home = server
    with dg.DagsterInstance.from_config(str(home)) as inst:
        yield inst


def _source(tmp_path: Path, run_id: str, home: Path | None = None) -> Paths:
    """A data root with one source spec; each test its own run id, since the server outlives the test. Its
    dagster_home is the module server's instance (a link), so the server is this data dir's instance."""
    p = Paths.from_env(tmp_path / "data")
    if home is not None:
        p.root.mkdir(parents=True, exist_ok=True)
        p.dagster_home.symlink_to(home, target_is_directory=True)
    write_spec(RunSpec(run_id=run_id, description="source", teacher={"model": "env0-oracle/oracle", "skill": 0.7}), p.runs)
    return p


def _nothing_written(paths: Paths, source: str) -> None:
    assert sorted(p.stem for p in paths.runs.glob("*.yaml")) == [source]
    assert not paths.db.exists()


def test_run_ids_are_dagster_safe_and_deterministic():
    for model in TEACHERS + ["a,b|c...d e", "x" * 300]:
        rid = teacher_run_id("src", model)
        assert is_valid_run_id(rid) and len(rid) <= 128, rid
        assert teacher_run_id("src", model) == rid
    assert teacher_slug("openrouter/qwen/qwen3:free") == "openrouter-qwen-qwen3-free"
    assert teacher_run_id("src", "x" * 300) != teacher_run_id("src", "x" * 299)
    with pytest.raises(BackfillError):
        teacher_slug("///")


def test_backfills_use_only_public_dagster_api():
    """The backfill goes through the webserver's GraphQL API, not through Dagster's private modules."""
    for module in (backfill_mod, ui_graphql):
        tree = ast.parse(Path(module.__file__).read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        assert [n for n in names if n.startswith("dagster") and "._" in n] == [], module.__name__


def test_the_default_url_is_where_ui_serves():
    assert DEFAULT_UI_URL == f"http://{UI_HOST}:{UI_PORT}"
    params = {p.name: p.default for p in get_command(app).commands["backfill"].params}
    assert params["url"] == DEFAULT_UI_URL


@slow
def test_backfill_of_the_real_graph_is_listed_with_its_partitions_keys_and_tags(tmp_path, server, instance):
    url, home = server
    paths = _source(tmp_path, "src", home)
    info = backfill_teachers(paths, "src", TEACHERS, url=url)

    assert info.run_ids == [teacher_run_id("src", t) for t in TEACHERS] == info.new_partitions
    assert info.status == "REQUESTED"
    for rid, path in zip(info.run_ids, info.spec_paths):
        spec = load_spec(path)
        assert spec.run_id == rid and spec.teacher.model == info.teachers[rid]
        assert spec.teacher.skill == 0.7  # everything else is the source's
    assert set(info.run_ids) <= set(instance.get_dynamic_partitions(run_partitions.name))
    from env0_posttrain.defs.assets import RUN_ASSETS
    from env0_posttrain.spec.optional_stages import optional_assets

    whole = sorted(a.key.to_user_string() for a in RUN_ASSETS)  # the whole graph but the stages without a section
    assert sorted(info.asset_keys) == [k for k in whole if k not in optional_assets()]

    with UiGraphQL(url) as ui:  # as the UI lists it
        bf = ui.backfill(info.backfill_id)
    assert bf["status"] == "REQUESTED" and bf["isAssetBackfill"] and bf["title"] == "teachers from src"
    assert sorted(bf["partitionNames"]) == sorted(info.run_ids)
    assert sorted("/".join(a["path"]) for a in bf["assetSelection"]) == sorted(info.asset_keys)
    tags = {t["key"]: t["value"] for t in bf["tags"]}
    assert tags["env0/backfill"] == "teachers" and tags["env0/from_run"] == "src"
    assert all(f"{rid}: {info.teachers[rid]}" in bf["description"] for rid in info.run_ids)

    backfill = instance.get_backfill(info.backfill_id)  # as the daemon reads it
    assert backfill.status == BulkActionStatus.REQUESTED and backfill.is_asset_backfill
    assert backfill.tags["env0/from_run"] == "src"
    from env0_posttrain.definitions import defs

    target = backfill.get_asset_backfill_data(defs.resolve_asset_graph()).target_subset
    assert {k.to_user_string() for k in target.asset_keys} == set(info.asset_keys)
    for key in target.asset_keys:
        assert set(target.get_partitions_subset(key).get_partition_keys()) == set(info.run_ids)


@slow
def test_cli_prints_each_run_and_the_backfill(tmp_path, server, instance):
    url, home = server
    paths = _source(tmp_path, "viacli", home)
    result = CliRunner().invoke(app, ["backfill", "--teacher", "openai/gpt-4o-mini", "--from", "viacli", "--url", url,
                                      "--data-dir", str(paths.root)])
    assert result.exit_code == 0, result.output
    rid = teacher_run_id("viacli", "openai/gpt-4o-mini")
    warning, first, last = result.output.strip().splitlines()
    assert warning.startswith("warning: teacher 'openai/gpt-4o-mini': teacher.api_key_env: ")  # no key set here
    assert first.split() == [rid, "teacher=openai/gpt-4o-mini"]
    backfill_id = last.split()[1]
    assert last.startswith(f"backfill {backfill_id} requested over 1 partitions")
    assert instance.get_backfill(backfill_id).tags["env0/from_run"] == "viacli"


@slow
def test_rerun_for_the_same_teacher_reuses_its_partition(tmp_path, server, instance):
    url, home = server
    paths = _source(tmp_path, "again", home)
    first = backfill_teachers(paths, "again", ["openai/gpt-4o-mini"], url=url, defs=toy_defs)
    again = backfill_teachers(paths, "again", ["openai/gpt-4o-mini", "openai/gpt-4o-mini"], url=url, defs=toy_defs)
    assert first.new_partitions == first.run_ids and first.asset_keys == ["toy_leaf", "toy_root"]
    assert again.run_ids == first.run_ids and again.new_partitions == []
    assert again.backfill_id != first.backfill_id
    assert all(instance.get_backfill(b.backfill_id).tags["env0/from_run"] == "again" for b in (first, again))
    assert instance.get_dynamic_partitions(run_partitions.name).count(first.run_ids[0]) == 1


@slow
def test_refuses_collisions_and_writes_nothing(tmp_path, server, instance):
    url, home = server
    paths = _source(tmp_path, "clash", home)
    before = (len(instance.get_backfills()), instance.get_dynamic_partitions(run_partitions.name))
    with pytest.raises(BackfillError, match="both map to run id"):
        backfill_teachers(paths, "clash", ["env0-oracle/a/b", "env0-oracle/a:b"], url=url, defs=toy_defs)
    with pytest.raises(BackfillError, match="no spec file"):
        backfill_teachers(paths, "nope", ["env0-oracle/a/b"], url=url, defs=toy_defs)
    _nothing_written(paths, "clash")
    # an edited clone on disk is not overwritten
    clone = paths.runs / f"{teacher_run_id('clash', 'env0-oracle/a/b')}.yaml"
    write_spec(RunSpec(run_id=clone.stem, description="edited by hand"), paths.runs)
    with pytest.raises(BackfillError, match="different spec"):
        backfill_teachers(paths, "clash", ["env0-oracle/a/b"], url=url, defs=toy_defs)
    assert load_spec(clone).description == "edited by hand"
    assert sorted(p.stem for p in paths.runs.glob("*.yaml")) == sorted(["clash", clone.stem])
    assert not paths.db.exists()
    assert (len(instance.get_backfills()), instance.get_dynamic_partitions(run_partitions.name)) == before


def test_unreachable_url_writes_nothing_and_names_it(tmp_path):
    paths = _source(tmp_path, "src")
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(BackfillError, match="env0-posttrain ui") as err:
        backfill_teachers(paths, "src", ["env0-oracle/a/b"], url=dead, defs=toy_defs)
    assert dead in str(err.value) and "\n" not in str(err.value)
    _nothing_written(paths, "src")

    result = CliRunner().invoke(app, ["backfill", "--teacher", "env0-oracle/a/b", "--from", "src", "--url", dead,
                                      "--data-dir", str(paths.root)])
    assert result.exit_code == 2
    assert dead in result.output and "env0-posttrain ui" in result.output and result.output.count("\n") == 1
    _nothing_written(paths, "src")


@slow
def test_a_server_of_another_instance_is_refused_before_writing(tmp_path, server, instance):
    """Whatever answers at the URL may have assets of the same names: its instance must be this data dir's."""
    url, home = server
    paths = _source(tmp_path, "elsewhere")  # its dagster_home is its own, not the server's
    before = len(instance.get_backfills())
    with pytest.raises(BackfillError, match=f"serves the Dagster instance at {home}, not this data dir's"):
        backfill_teachers(paths, "elsewhere", ["env0-oracle/a/b"], url=url, defs=toy_defs)
    result = CliRunner().invoke(app, ["backfill", "--teacher", "env0-oracle/a/b", "--from", "elsewhere", "--url", url,
                                      "--data-dir", str(paths.root)])
    assert result.exit_code == 2 and "env0-posttrain ui --data-dir" in result.output
    _nothing_written(paths, "elsewhere")
    assert len(instance.get_backfills()) == before


@slow
def test_a_server_serving_the_assets_from_another_code_location_is_refused(tmp_path, server, instance, monkeypatch):
    url, home = server
    monkeypatch.setattr(backfill_mod, "LOCATION", "someone_elses")  # the project's assets, served under another name
    paths = _source(tmp_path, "located", home)
    with pytest.raises(BackfillError, match="from code location 'env0_posttrain', not this project's 'someone_elses'"):
        backfill_teachers(paths, "located", ["env0-oracle/a/b"], url=url)
    _nothing_written(paths, "located")


def test_the_project_location_name_is_the_workspaces():
    workspace = yaml.safe_load((ROOT / "workspace.yaml").read_text())
    assert [e["python_module"]["location_name"] for e in workspace["load_from"]] == [ui_graphql.LOCATION]


@slow
def test_assets_the_server_lacks_are_refused_before_writing(tmp_path, server, instance):
    url, home = server

    @dg.asset(partitions_def=run_partitions)
    def ghost() -> None: ...

    paths = _source(tmp_path, "haunted", home)
    before = len(instance.get_backfills())
    with pytest.raises(BackfillError, match=r"has no assets \['ghost'\]"):
        backfill_teachers(paths, "haunted", ["env0-oracle/a/b"], url=url, defs=dg.Definitions(assets=[ghost]))
    _nothing_written(paths, "haunted")
    assert len(instance.get_backfills()) == before


@slow
def test_graphql_errors_become_backfill_errors_naming_the_cause(tmp_path, server, monkeypatch):
    url, home = server
    with UiGraphQL(url) as ui:  # an unregistered partition: the server's typed error, named
        with pytest.raises(UiError, match="PartitionKeysNotFoundError.*never-registered"):
            ui.launch_asset_backfill(["toy_root"], ["never-registered"], tags={})

    launch = UiGraphQL.launch_asset_backfill  # the server refuses the title (over 100 characters)
    monkeypatch.setattr(UiGraphQL, "launch_asset_backfill", lambda self, *a, **kw: launch(self, *a, **{**kw, "title": "t" * 101}))
    paths = _source(tmp_path, "titled", home)
    with pytest.raises(BackfillError, match="PythonError.*DagsterInvariantViolationError.*Titles must not be longer than 100"):
        backfill_teachers(paths, "titled", ["env0-oracle/a/b"], url=url, defs=toy_defs)


@slow
def test_daemon_runs_the_backfill_and_graphql_shows_it(tmp_path, server, instance):
    url, home = server
    paths = _source(tmp_path, "daemon", home)
    info = backfill_teachers(paths, "daemon", TEACHERS[:2], url=url, defs=toy_defs)
    assert info.asset_keys == ["toy_leaf", "toy_root"]
    target = InProcessWorkspaceLoadTarget(InProcessCodeLocationOrigin(
        LoadableTargetOrigin(module_name=toy_run_assets.__name__, attribute="toy_defs"), location_name="toy"))
    logger = logging.getLogger("test_backfill_daemon")
    with create_test_daemon_workspace_context(target, instance) as workspace:
        for _ in range(6):  # each daemon tick submits what is ready; the sync launcher runs it at once
            list(execute_backfill_jobs(workspace, logger, [instance.get_backfill(info.backfill_id)]))
            if instance.get_backfill(info.backfill_id).status != BulkActionStatus.REQUESTED:
                break
    assert instance.get_backfill(info.backfill_id).status == BulkActionStatus.COMPLETED_SUCCESS

    runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": info.backfill_id}))
    assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
    assert {r.tags["dagster/partition"] for r in runs} == set(info.run_ids)
    for rid in info.run_ids:
        for asset in ("toy_root", "toy_leaf"):
            mats = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[rid]), limit=5
            ).records
            assert len(mats) == 1

    assert backfill_mod.backfill_status(info.backfill_id, url) == "COMPLETED_SUCCESS"
    with UiGraphQL(url) as ui:
        bf = ui.backfill(info.backfill_id)
    assert bf["isAssetBackfill"] and bf["title"] == "teachers from daemon"
    assert sorted(bf["partitionNames"]) == sorted(info.run_ids)
    assert sorted(a["path"][0] for a in bf["assetSelection"]) == ["toy_leaf", "toy_root"]
