"""One dynamic partition per run id: every asset of a run shares it."""

import dagster as dg

run_partitions = dg.DynamicPartitionsDefinition(name="run_id")


def register_partition(instance: dg.DagsterInstance, run_id: str) -> bool:
    """Add the run's partition; False when the instance has it already."""
    if instance.has_dynamic_partition(run_partitions.name, run_id):
        return False
    instance.add_dynamic_partitions(run_partitions.name, [run_id])
    return True
