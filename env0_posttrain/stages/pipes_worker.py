"""The external side of Dagster Pipes: runs one stage of a run (by default LoRA training) in its own
process or GPU pod and reports metadata, data version and check results back to the orchestrator.

It imports `dagster_pipes` (a small dependency-free package), never `dagster`, so a training image
needs only this project and its ML stack. Run as `python -m env0_posttrain.stages.pipes_worker`; the
run id, data root and stage come as Pipes extras from `env0_posttrain.defs.pipes`.

The project's own log lines (training progress at a steady interval, `train/tracking/progress.py`) go to the
orchestrator's event log through Pipes, as they do for a stage that runs in the step's process.
A path under the data dir's served folders is reported as a URL on the artifact server.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dagster_pipes import PipesContext, PipesMetadataValue, open_dagster_pipes

DEFAULT_STAGE = "env0_posttrain.stages.lora_adapter:train_adapter"
MODULE = "env0_posttrain.stages.pipes_worker"


def resolve_stage(ref: str) -> Callable:
    """'package.module:function' -> the function; a clear error for a bad reference."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise ValueError(f"stage {ref!r}: expected 'module:function'")
    fn = getattr(importlib.import_module(module_name), attr, None)
    if not callable(fn):
        raise ValueError(f"stage {ref!r}: {module_name} has no function {attr!r}")
    return fn


def pipes_value(v: Any, root: Path) -> Any:
    """Typed Pipes metadata, so paths (URLs where served) and JSON keep their kind in the UI."""
    if isinstance(v, Path):
        from env0_posttrain.util.artifact_http import artifact_url

        url = artifact_url(v, root)
        return PipesMetadataValue(raw_value=url, type="url") if url else PipesMetadataValue(raw_value=str(v), type="path")
    if isinstance(v, (dict, list, tuple)):
        return PipesMetadataValue(raw_value=_jsonable(v), type="json")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, Path):
        return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def pipes_metadata(metadata: Mapping[str, Any], root: Path, markdown: Mapping[str, str] | None = None) -> dict[str, Any]:
    out = {k: pipes_value(v, root) for k, v in metadata.items()}
    out.update({k: PipesMetadataValue(raw_value=v, type="md") for k, v in (markdown or {}).items()})
    return out


def report_stage_result(pipes: PipesContext, result: Any, root: Path) -> None:
    """A `stages.StageResult` -> one materialization plus one check result per outcome (all blocking: ERROR)."""
    pipes.report_asset_materialization(
        metadata=pipes_metadata(result.metadata, root, result.markdown), data_version=result.data_version
    )
    for check in result.checks:
        if check.passed is None:  # did not apply: no result, so it shows Skipped (defs/metadata.to_result)
            continue
        pipes.report_asset_check(
            check_name=check.name,
            passed=bool(check.passed),
            severity="ERROR",
            metadata=pipes_metadata({"description": check.description, **check.metadata}, root),
        )


def run_stage(pipes: PipesContext) -> None:
    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages.context import StageContext

    run_id = pipes.get_extra("run_id")
    data_dir = pipes.get_extra("data_dir")
    stage_ref = pipes.extras.get("stage") or DEFAULT_STAGE
    pipes.log.info(f"pipes worker: stage {stage_ref} for run {run_id} under {data_dir}")
    paths = Paths.from_env(data_dir)
    ctx = StageContext.load(run_id, paths, pipes.log)
    with forwarded_logs(pipes):
        report_stage_result(pipes, resolve_stage(stage_ref)(ctx), paths.root)


class _ToPipes(logging.Handler):
    def __init__(self, pipes: PipesContext):
        super().__init__(logging.INFO)
        self.pipes = pipes

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.pipes.log.log(record.levelno, self.format(record))
        except Exception:  # noqa: BLE001 - a log line must never fail the stage
            self.handleError(record)


@contextmanager
def forwarded_logs(pipes: PipesContext) -> Iterator[None]:
    """While the stage runs, the `env0_posttrain` loggers' INFO lines also go to Dagster's event log."""
    handler, logger = _ToPipes(pipes), logging.getLogger("env0_posttrain")
    saved = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved)


def main() -> None:
    from env0_posttrain.util.parent_watch import PARENT_PID_ENV, die_with_process

    die_with_process(os.environ.get(PARENT_PID_ENV))  # a killed orchestrator takes its training with it
    with open_dagster_pipes() as pipes:
        run_stage(pipes)


if __name__ == "__main__":
    main()
