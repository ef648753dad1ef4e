"""What a re-run of a partition has to materialize: the assets that are missing, failed or stale, in Dagster's
own terms, so a run killed in LoRA or an eval resumes there instead of re-running every finished rollout.

- missing / failed / in progress: the asset partition's status (`instance.get_status_by_partition`);
- a failed blocking check: an ERROR-severity check that failed on the partition's latest materialization
  (the gate held: what is downstream never ran, and the asset must pass it before they do);
- stale: `CachingStaleStatusResolver` (code versions and data versions, as the UI's "stale" badge).

An asset another live run is materializing now is left to it, with everything downstream of it.
Staleness that a re-materialization causes (a new data version upstream) shows only once it ran:
`materialize_run` asks again after each pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView
from dagster._core.definitions.assets.graph.asset_graph import AssetGraph
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.definitions.temporal_context import TemporalContext
from dagster._core.events import DagsterEventType
from dagster._time import get_current_datetime

IN_PROGRESS = "in progress in another run"


def _failed_checks(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str) -> list[str]:
    """Blocking (ERROR) checks that failed on the partition's latest materialization of `key`."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=1).records
    if not records:
        return []
    failed = []
    for rec in instance.get_records_for_run(records[0].run_id,
                                            of_type=DagsterEventType.ASSET_CHECK_EVALUATION).records:
        evaluation = rec.event_log_entry.dagster_event.event_specific_data
        if (evaluation.asset_key == key and not evaluation.passed
                and evaluation.severity == dg.AssetCheckSeverity.ERROR):
            failed.append(evaluation.check_name)
    return failed


def asset_states(instance: dg.DagsterInstance, assets: Sequence[dg.AssetsDefinition],
                 partition: str) -> dict[dg.AssetKey, str | None]:
    """Every asset key -> why it must be materialized (None: up to date; IN_PROGRESS: left to its run)."""
    graph = AssetGraph.from_assets(assets)
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    stale = CachingStaleStatusResolver(instance, graph, loading_context=view)
    states: dict[dg.AssetKey, str | None] = {}
    for key in graph.toposorted_asset_keys:
        node = graph.get(key)
        if not node.is_materializable:
            continue
        status = (instance.get_status_by_partition(key, [partition], node.partitions_def) or {}).get(partition)
        if any(states.get(parent) == IN_PROGRESS for parent in node.parent_keys):
            states[key] = IN_PROGRESS  # its inputs are being made now
        elif status is None:
            states[key] = "missing"
        elif status == dg.AssetPartitionStatus.FAILED:
            states[key] = "failed"
        elif status == dg.AssetPartitionStatus.IN_PROGRESS:
            states[key] = IN_PROGRESS
        elif failed := _failed_checks(instance, key, partition):
            states[key] = f"blocking check failed: {', '.join(failed)}"
        elif stale.get_status(key, partition) == StaleStatus.STALE:
            causes = stale.get_stale_root_causes(key, partition)
            states[key] = "stale: " + "; ".join(sorted({f"{c.asset_key.to_user_string()} {c.reason}" for c in causes}))
        else:
            states[key] = None
    return states


def needed(states: dict[dg.AssetKey, str | None]) -> list[dg.AssetKey]:
    return [k for k, why in states.items() if why is not None and why != IN_PROGRESS]
