"""Teacher backfills: specs cloned, partitions registered, a REQUESTED asset backfill that the daemon
runs and that the UI's GraphQL API reports."""

import logging
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._daemon.backfill import execute_backfill_iteration
from dagster_graphql.test.utils import execute_dagster_graphql

from env0_posttrain.orchestration.backfill import BackfillError, backfill_teachers, teacher_run_id, teacher_slug
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.paths import Paths
from env0_posttrain.runspec import RunSpec, is_valid_run_id, load_spec, write_spec

TEACHERS = ["openai/gpt-4o-mini", "openrouter/qwen/qwen3-235b:free", "env0-oracle/strong"]


# A two-asset graph on the same `run_id` partitions, cheap enough for the daemon to run in-process.
@dg.asset(partitions_def=run_partitions)
def toy_root(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"partition": context.partition_key})


@dg.asset(partitions_def=run_partitions, deps=[toy_root])
def toy_leaf(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"partition": context.partition_key})


toy_defs = dg.Definitions(assets=[toy_root, toy_leaf], executor=dg.in_process_executor)


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    p = Paths.from_env(tmp_path / "data")
    write_spec(RunSpec(run_id="src", description="source", teacher={"model": "env0-oracle/oracle", "skill": 0.7}), p.runs)
    return p


@pytest.fixture
def instance(tmp_path: Path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home), synchronous_run_coordinator=True, synchronous_run_launcher=True) as inst:
        yield inst


def test_run_ids_are_dagster_safe_and_deterministic():
    for model in TEACHERS + ["a,b|c...d e", "x" * 300]:
        rid = teacher_run_id("src", model)
        assert is_valid_run_id(rid) and len(rid) <= 128, rid
        assert teacher_run_id("src", model) == rid
    assert teacher_slug("openrouter/qwen/qwen3:free") == "openrouter-qwen-qwen3-free"
    assert teacher_run_id("src", "x" * 300) != teacher_run_id("src", "x" * 299)
    with pytest.raises(BackfillError):
        teacher_slug("///")


def test_backfill_of_the_real_graph_is_recorded_with_its_partitions(paths: Paths, instance):
    info = backfill_teachers(instance, paths, "src", TEACHERS)

    assert info.run_ids == [teacher_run_id("src", t) for t in TEACHERS]
    for rid, path in zip(info.run_ids, info.spec_paths):
        spec = load_spec(path)
        assert spec.run_id == rid and spec.teacher.model == info.teachers[rid]
        assert spec.teacher.skill == 0.7  # everything else is the source's
    assert set(instance.get_dynamic_partitions("run_id")) == set(info.run_ids)
    from env0_posttrain.defs.assets import RUN_ASSETS

    assert sorted(info.asset_keys) == sorted(a.key.to_user_string() for a in RUN_ASSETS)  # the whole graph

    backfill = instance.get_backfill(info.backfill_id)
    assert backfill.status == BulkActionStatus.REQUESTED and backfill.is_asset_backfill
    assert backfill.tags["env0/from_run"] == "src"
    from env0_posttrain.definitions import defs

    target = backfill.get_asset_backfill_data(defs.resolve_asset_graph()).target_subset
    assert {k.to_user_string() for k in target.asset_keys} == set(info.asset_keys)
    for key in target.asset_keys:
        assert set(target.get_partitions_subset(key).get_partition_keys()) == set(info.run_ids)


def test_rerun_for_the_same_teacher_reuses_its_partition(paths: Paths, instance):
    graph = toy_defs.resolve_asset_graph()
    first = backfill_teachers(instance, paths, "src", ["openai/gpt-4o-mini"], asset_graph=graph)
    again = backfill_teachers(instance, paths, "src", ["openai/gpt-4o-mini", "openai/gpt-4o-mini"], asset_graph=graph)
    assert again.run_ids == first.run_ids and again.new_partitions == []
    assert again.backfill_id != first.backfill_id and len(instance.get_backfills()) == 2
    assert instance.get_dynamic_partitions("run_id") == first.run_ids


def test_refuses_collisions_and_writes_nothing(paths: Paths, instance):
    with pytest.raises(BackfillError, match="both map to run id"):
        backfill_teachers(instance, paths, "src", ["a/b", "a:b"], asset_graph=toy_defs.resolve_asset_graph())
    with pytest.raises(BackfillError, match="no spec file"):
        backfill_teachers(instance, paths, "nope", ["a/b"], asset_graph=toy_defs.resolve_asset_graph())
    # an edited clone on disk is not overwritten
    clone = paths.runs / f"{teacher_run_id('src', 'a/b')}.yaml"
    write_spec(RunSpec(run_id=clone.stem, description="edited by hand"), paths.runs)
    with pytest.raises(BackfillError, match="different spec"):
        backfill_teachers(instance, paths, "src", ["a/b"], asset_graph=toy_defs.resolve_asset_graph())
    assert load_spec(clone).description == "edited by hand"
    assert sorted(p.stem for p in paths.runs.glob("*.yaml")) == sorted(["src", clone.stem])
    assert instance.get_backfills() == [] and instance.get_dynamic_partitions("run_id") == []


def test_daemon_runs_the_backfill_and_graphql_shows_it(paths: Paths, instance):
    info = backfill_teachers(instance, paths, "src", TEACHERS[:2], asset_graph=toy_defs.resolve_asset_graph())
    assert info.asset_keys == ["toy_leaf", "toy_root"]
    target = InProcessWorkspaceLoadTarget(
        InProcessCodeLocationOrigin(LoadableTargetOrigin(python_file=__file__, attribute="toy_defs"), location_name="toy")
    )
    logger = logging.getLogger("test_backfill_daemon")
    with create_test_daemon_workspace_context(target, instance) as workspace:
        for _ in range(6):  # each daemon tick submits what is ready; the sync launcher runs it at once
            list(execute_backfill_iteration(workspace, logger))
            if instance.get_backfill(info.backfill_id).status != BulkActionStatus.REQUESTED:
                break
        assert instance.get_backfill(info.backfill_id).status == BulkActionStatus.COMPLETED_SUCCESS

        runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": info.backfill_id}))
        assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        assert {r.tags["dagster/partition"] for r in runs} == set(info.run_ids)
        for rid in info.run_ids:
            for asset in ("toy_root", "toy_leaf"):
                ev = instance.get_latest_materialization_event(dg.AssetKey(asset))
                assert ev is not None
            mats = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey("toy_leaf"), asset_partitions=[rid]), limit=5
            ).records
            assert len(mats) == 1

        result = execute_dagster_graphql(
            workspace.create_request_context(),
            """query ($id: String!) { partitionBackfillOrError(backfillId: $id) {
                 __typename ... on PartitionBackfill { id status isAssetBackfill numPartitions title
                   assetSelection { path } } } }""",
            variables={"id": info.backfill_id},
        )
    assert not result.errors, result.errors
    bf = result.data["partitionBackfillOrError"]
    assert bf["__typename"] == "PartitionBackfill" and bf["status"] == "COMPLETED_SUCCESS"
    assert bf["isAssetBackfill"] and bf["numPartitions"] == 2 and bf["title"] == "teachers from src"
    assert sorted(a["path"][0] for a in bf["assetSelection"]) == ["toy_leaf", "toy_root"]
