"""One dynamic partition per run id: every asset of a run shares it."""

import dagster as dg

run_partitions = dg.DynamicPartitionsDefinition(name="run_id")
