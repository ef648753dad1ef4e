"""A Pipes training stage that only writes its pid and sleeps, and a process that runs it through the project's
`run_training_via_pipes` as `run materialize` does: what defs/test_pipes_parent.py kills."""

import os
import sys
import time
from pathlib import Path

STAGE = "env0_posttrain_tests.support.pipes_sleeper:sleep_stage"


def sleep_stage(ctx):
    (ctx.paths.root / "worker.pid").write_text(str(os.getpid()))
    time.sleep(600)


def orchestrate(data_dir: str) -> None:
    """The parent: materialize a one-asset graph whose asset trains through Pipes with the sleeping stage."""
    import dagster as dg

    from env0_posttrain.defs.partitions import run_partitions
    from env0_posttrain.defs.pipes import run_training_via_pipes

    @dg.asset(partitions_def=run_partitions)
    def lora_adapter(context: dg.AssetExecutionContext, pipes_client: dg.PipesSubprocessClient):
        return run_training_via_pipes(context, pipes_client, context.partition_key, data_dir, stage=STAGE)

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(run_partitions.name, ["sleeper"])
    dg.materialize([lora_adapter], partition_key="sleeper", instance=instance,
                   resources={"pipes_client": dg.PipesSubprocessClient()})


if __name__ == "__main__":
    Path(sys.argv[1], "parent.pid").write_text(str(os.getpid()))
    orchestrate(sys.argv[1])
