"""A two-asset graph on the project's `run_id` partitions, cheap enough for the backfill daemon to run
in-process: the teacher backfill tests serve it as a second code location beside the real one."""

import dagster as dg

from env0_posttrain.defs.partitions import run_partitions


@dg.asset(partitions_def=run_partitions)
def toy_root(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"partition": context.partition_key})


@dg.asset(partitions_def=run_partitions, deps=[toy_root])
def toy_leaf(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"partition": context.partition_key})


toy_defs = dg.Definitions(assets=[toy_root, toy_leaf], executor=dg.in_process_executor)
