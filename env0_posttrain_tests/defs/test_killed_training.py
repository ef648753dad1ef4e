"""A training step whose process dies by a signal: the cause in plain words, its partial adapter moved aside, and
a retry with backoff; an ordinary failure of the process is not retried. The child is a real process killed by a
real SIGKILL, launched through Dagster Pipes as the lora_adapter asset launches its worker."""

import sys
from pathlib import Path

import dagster as dg

from env0_posttrain.defs import assets
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.store import Store
from env0_posttrain.util.paths import Paths
from env0_posttrain.util.processes import signal_cause

RUN = "killed"


def _training(paths: Paths, store: Store) -> Path:
    """A training the dead child 'started': its row says running in a process that no longer exists."""
    train_id = store.start_training(RUN)
    folder = paths.artifacts(RUN) / "adapter" / train_id
    (folder / "checkpoint-6").mkdir(parents=True)
    (folder / "checkpoint-6" / "adapter_model.safetensors").write_bytes(b"half")
    store.finish_training(train_id, "running", None, None, {})
    return folder


def _asset(paths: Paths, code: str):
    @dg.asset(name="trainer", partitions_def=run_partitions)
    def trainer(context: dg.AssetExecutionContext, pipes_client: dg.PipesSubprocessClient):
        with assets.retry_when_killed(context, paths):
            (_training(paths, Store(paths.db)) if context.retry_number < 2 else None)
            pipes_client.run(context=context, command=[sys.executable, "-c", code]).get_results()
        return None

    return trainer


def _run(tmp_path: Path, monkeypatch, code: str):
    monkeypatch.setattr(assets, "KILLED_BACKOFF_S", 0)
    paths = Paths.from_env(tmp_path)
    Store(paths.db)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(run_partitions.name, [RUN])
        result = dg.materialize([_asset(paths, code)], partition_key=RUN, instance=instance, raise_on_error=False,
                                resources={"pipes_client": dg.PipesSubprocessClient()})
        logs = [e.user_message for e in instance.all_logs(result.run_id)]
    return paths, result, logs


def test_a_training_killed_by_a_signal_is_retried_with_its_partial_adapter_moved_aside(tmp_path, monkeypatch):
    paths, result, logs = _run(tmp_path, monkeypatch, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert not result.success
    retries = [m for m in logs if m.startswith("lora_adapter: the training process was killed by signal 9")]
    assert len(retries) == 2 and "retry 1 of 2 in 0 s" in retries[0] and "retry 2 of 2" in retries[1]
    assert "likely out of memory" in retries[0] and "partial adapter moved aside to" in retries[0]
    failure = [e for e in result.all_events if e.is_step_failure][-1].step_failure_data.user_failure_data
    assert "killed by signal 9 (SIGKILL)" in failure.description and "gave up after 2 retries" in failure.description
    adapter = paths.artifacts(RUN) / "adapter"
    assert sorted(p.name for p in adapter.iterdir()) == [".partial"]  # nothing half-written left in place
    assert len(list((adapter / ".partial").iterdir())) == 2
    assert set(Store(paths.db).training_statuses(RUN).values()) == {"failed"}


def test_an_ordinary_failure_of_the_process_is_not_retried(tmp_path, monkeypatch):
    _, result, logs = _run(tmp_path, monkeypatch, "raise SystemExit(3)")
    assert not result.success and not any("retry" in m for m in logs)
    assert len([e for e in result.all_events if e.is_step_failure]) == 1


def test_signal_causes_in_plain_words():
    assert signal_cause(-9).startswith("killed by signal 9 (SIGKILL): likely out of memory")
    assert signal_cause(-15).startswith("killed by signal 15 (SIGTERM): stopped from outside")
    assert signal_cause(1) is None and signal_cause(0) is None and signal_cause(None) is None
