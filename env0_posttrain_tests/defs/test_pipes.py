"""Training through Dagster Pipes: a worker subprocess runs a stage and its metadata, data version,
logs and blocking check results come back into the asset's materialization."""

import json
import secrets
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._serdes import serialize_value

from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.pipes import run_training_via_pipes
from env0_posttrain.stages.pipes_worker import pipes_metadata, resolve_stage
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, write_spec
from env0_posttrain.stages.context import CheckOutcome, StageContext, StageResult
from env0_posttrain_tests.support.paths import REPO as ROOT

RUN_ID = "pipes-run"


def fake_training_stage(ctx: StageContext) -> StageResult:
    """Stands in for train_adapter: real StageContext, real files, no torch."""
    out = ctx.artifacts("adapter", "fake") / "adapter_config.json"
    out.write_text(json.dumps({"r": ctx.spec.lora.r}))
    ctx.log.info(f"fake training for {ctx.run_id}: lora r={ctx.spec.lora.r}")
    from env0_posttrain.util.progress_log import ProgressLog

    progress = ProgressLog("fake steps", 3, "steps", seconds=0.0)  # the project's logger, as training reports
    for step in (1, 2, 3):
        progress.update(step, loss=1.0 / step)
    passed = ctx.spec.description != "make the probe fail"
    return StageResult(
        metadata={"adapter_dir": out.parent, "steps": 3, "final_train_loss": 0.25, "curve": {"1": 1.0, "3": 0.25}},
        markdown={"notes": "**tiny** run"},
        data_version="rev-abc123",
        checks=[CheckOutcome("adapter_learned", passed, "loss went down" if passed else "probe failed",
                             {"loss_drop": 0.75})],
    )


def crashing_stage(ctx: StageContext) -> StageResult:
    raise RuntimeError(f"run {ctx.run_id}: CUDA out of memory (simulated)")


def _asset(stage: str):
    @dg.asset(
        name="lora_adapter",
        partitions_def=run_partitions,
        check_specs=[dg.AssetCheckSpec("adapter_learned", asset="lora_adapter", blocking=True)],
    )
    def _lora(context: dg.AssetExecutionContext, pipes_client: dg.ResourceParam[dg.PipesClient], env0: Env0Resource):
        return run_training_via_pipes(context, pipes_client, context.partition_key, env0.paths().root, stage=stage)

    return _lora


def _materialize(tmp_path: Path, stage: str, description: str = ""):
    paths = Paths.from_env(tmp_path / "data")
    write_spec(RunSpec(run_id=RUN_ID, description=description, lora={"r": 4}), paths.runs)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(run_partitions.name, [RUN_ID])
    result = dg.materialize(
        [_asset(stage)],
        partition_key=RUN_ID,
        instance=instance,
        resources={"env0": Env0Resource(data_dir=str(paths.root)),
                   "pipes_client": dg.PipesSubprocessClient(cwd=str(ROOT))},
        raise_on_error=False,
    )
    return result, paths, instance


def test_metadata_data_version_logs_and_checks_round_trip(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ENV0_ARTIFACTS_URL", raising=False)
    token = "hf_FAKE_" + secrets.token_hex(12)
    monkeypatch.setenv("HF_TOKEN", token)  # the worker inherits it; nothing may echo it back
    result, paths, instance = _materialize(tmp_path, f"{__name__}:fake_training_stage")
    assert result.success
    (mat,) = result.asset_materializations_for_node("lora_adapter")
    md = mat.metadata
    assert md["steps"].value == 3 and md["final_train_loss"].value == 0.25
    assert isinstance(md["adapter_dir"], dg.UrlMetadataValue)  # served by `ui`: one click from the UI
    assert md["adapter_dir"].value == f"http://127.0.0.1:3001/artifacts/{RUN_ID}/adapter/fake/"
    assert md["curve"].value == {"1": 1.0, "3": 0.25}
    assert isinstance(md["notes"], dg.MarkdownMetadataValue) and md["notes"].value == "**tiny** run"
    assert mat.tags["dagster/data_version"] == "rev-abc123"
    assert json.loads((paths.artifacts(RUN_ID) / "adapter" / "fake" / "adapter_config.json").read_text()) == {"r": 4}

    (check,) = result.get_asset_check_evaluations()
    assert check.check_name == "adapter_learned" and check.passed
    assert check.metadata["loss_drop"].value == 0.75

    logs = [e.user_message for e in instance.all_logs(result.run_id)]
    assert any("fake training for pipes-run: lora r=4" in m for m in logs)
    progress = [m for m in logs if m.startswith("fake steps: ")]  # the worker's progress lines, through Pipes
    assert [m.split(",")[0] for m in progress] == ["fake steps: 1/3 steps (33%)", "fake steps: 2/3 steps (67%)",
                                                   "fake steps: 3/3 steps (100%)"]
    assert "loss 0.5000" in progress[1]
    assert not any(token in serialize_value(e) for e in instance.all_logs(result.run_id))
    assert not [p for p in paths.root.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]


def test_failed_blocking_check_comes_back_failed(tmp_path: Path):
    result, _, _ = _materialize(tmp_path, f"{__name__}:fake_training_stage", description="make the probe fail")
    evaluations = result.get_asset_check_evaluations()
    assert [(e.check_name, e.passed) for e in evaluations] == [("adapter_learned", False)]
    assert evaluations[0].severity == dg.AssetCheckSeverity.ERROR
    assert not result.success  # blocking: the step fails, so nothing downstream runs on a bad adapter


def test_worker_crash_fails_the_step_with_its_error(tmp_path: Path):
    result, _, instance = _materialize(tmp_path, f"{__name__}:crashing_stage")
    assert not result.success
    assert not result.asset_materializations_for_node("lora_adapter")
    events = [e for e in instance.all_logs(result.run_id) if e.dagster_event]
    # the worker's own exception, with its traceback, arrives through Pipes...
    errors = [e.dagster_event.event_specific_data.error for e in events if e.dagster_event.event_type_value == "ENGINE_EVENT"]
    assert any(err and "CUDA out of memory (simulated)" in err.message for err in errors)
    # ...and the step fails on the worker's exit code
    failures = [e for e in events if e.dagster_event.event_type_value == "STEP_FAILURE"]
    assert len(failures) == 1 and "failed with code 1" in str(failures[0].dagster_event.event_specific_data)


def test_worker_image_needs_no_dagster():
    """A training image carries dagster-pipes only; the worker must not pull in the orchestrator."""
    code = "import sys, env0_posttrain.stages.pipes_worker; print(sorted(m for m in sys.modules if m.split('.')[0] == 'dagster'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_worker_helpers(monkeypatch):
    monkeypatch.delenv("ENV0_ARTIFACTS_URL", raising=False)
    assert resolve_stage("env0_posttrain.stages.lora_adapter:train_adapter").__name__ == "train_adapter"
    with pytest.raises(ValueError, match="module:function"):
        resolve_stage("env0_posttrain.stages.lora_adapter")
    with pytest.raises(ValueError, match="no function"):
        resolve_stage("env0_posttrain.stages.lora_adapter:nope")
    md = pipes_metadata({"p": Path("/x"), "n": 1, "t": (1, Path("/y")), "r": Path("/data/artifacts/r/report")},
                        Path("/data"), {"m": "# t"})
    assert md["p"] == {"raw_value": "/x", "type": "path"}  # outside the data dir's served folders: a path
    assert md["r"] == {"raw_value": "http://127.0.0.1:3001/artifacts/r/report", "type": "url"}
    assert md["t"] == {"raw_value": [1, "/y"], "type": "json"}
    assert md["m"]["type"] == "md" and md["n"] == 1
