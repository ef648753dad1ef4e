"""A check that verified nothing is Skipped in Dagster, never a green pass; a run's optional stages (the RL assets
without an `rl:` section) are left out of what the project launches for it."""

from pathlib import Path

import dagster as dg
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionResolvedStatus

from env0_posttrain.defs.assets import (REPORT_AUTOMATION, RUN_ASSETS, comparison_report, rl_adapter,
                                        rl_eval_trajectories, run_asset, run_asset_keys)
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.optional_stages import OPTIONAL_STAGES, absent_assets, applicable
from env0_posttrain.spec.runspec import RunSpec, parse_spec, write_spec
from env0_posttrain.stages.context import CheckOutcome, StageResult
from env0_posttrain.util.paths import Paths


def _statuses(instance: dg.DagsterInstance, asset: str) -> dict[str, AssetCheckExecutionResolvedStatus]:
    import asyncio

    from dagster._core.loader import LoadingContextForTest

    out = {}
    for name in ("really_checked", "did_not_apply"):
        (record,) = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(dg.AssetKey(asset), name), limit=1)
        out[name] = asyncio.run(record.resolve_status(LoadingContextForTest(instance)))
    return out


def test_a_check_that_does_not_apply_is_skipped_and_does_not_block(tmp_path: Path):
    write_spec(RunSpec(run_id="r"), Paths.from_env(tmp_path).runs)

    @run_asset("checked_thing", group="data", deps=[], pool="duckdb_writer", packages=("sft",),
               description="a stage whose second check has nothing to look at",
               checks=[("really_checked", "it looked"), ("did_not_apply", "nothing to look at")])
    def checked_thing(ctx):
        return StageResult(metadata={"rows": 3}, data_version="v1", checks=[
            CheckOutcome("really_checked", True, "3 rows looked at"),
            CheckOutcome("did_not_apply", None, "not checked: these rows carry no token ids")])

    @dg.asset(partitions_def=checked_thing.partitions_def, deps=[checked_thing])
    def below() -> None:
        return None

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("run_id", ["r"])
        result = dg.materialize([checked_thing, below], partition_key="r", instance=instance,
                                resources={"env0": Env0Resource(data_dir=str(tmp_path))})
        assert result.success
        evaluations = result.get_asset_check_evaluations()
        assert [(e.check_name, e.passed) for e in evaluations] == [("really_checked", True)]  # one verdict only
        assert result.asset_materializations_for_node("below")  # a check without a result does not block
        meta = result.asset_materializations_for_node("checked_thing")[0].metadata
        assert meta["checks_not_applicable"].value == {"did_not_apply": "not checked: these rows carry no token ids"}
        assert _statuses(instance, "checked_thing") == {
            "really_checked": AssetCheckExecutionResolvedStatus.SUCCEEDED,
            "did_not_apply": AssetCheckExecutionResolvedStatus.SKIPPED}


def test_a_spec_without_rl_has_no_rl_assets_anywhere_the_project_launches():
    plain = RunSpec(run_id="plain")
    with_rl = parse_spec({"run_id": "rl", "rl": {}}, "rl")
    rl_keys = {rl_adapter.key, rl_eval_trajectories.key}
    every_optional = frozenset(a for names in OPTIONAL_STAGES.values() for a in names)
    assert absent_assets(plain) == every_optional and absent_assets(with_rl) == every_optional - set(OPTIONAL_STAGES["rl"])
    assert rl_keys.isdisjoint(run_asset_keys(plain)) and rl_keys <= set(run_asset_keys(with_rl))
    assert len(run_asset_keys(plain)) == len(RUN_ASSETS) - len(every_optional)
    assert applicable(["task_set", "rl_adapter"], plain) == ["task_set"]
    # automation: the report does not wait for the arms a run does not have, and the RL assets never start by
    # themselves (eager automation would run them for every run)
    assert rl_adapter.specs_by_key[rl_adapter.key].automation_condition is None
    assert rl_eval_trajectories.specs_by_key[rl_eval_trajectories.key].automation_condition is None
    assert comparison_report.specs_by_key[comparison_report.key].automation_condition == REPORT_AUTOMATION
    assert "rl_eval_trajectories" in str(REPORT_AUTOMATION)
