"""What `run materialize` prints: one line per finished episode, no Dagster DEBUG events unless --verbose,
one message naming the spec field when a rollout cannot work, and training progress without raw dicts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from env0_posttrain.agent.llm import litellm, register_provider
from env0_posttrain.agent.providers.base import Env0Provider
from env0_posttrain.cli.main import app

runner = CliRunner()
SMALL = ["--set", "tasks.n_train=3", "--set", "tasks.n_eval=1", "--set", "tasks.families=[calendar]"]
STEPS = ["--select", "task_set", "--select", "teacher_trajectories"]


def _invoke(*args: str):
    result = runner.invoke(app, list(args))
    return result, result.output  # stdout and stderr as a terminal shows them


def test_one_line_per_episode_and_no_dagster_debug_events(tmp_path: Path):
    data = ["--data-dir", str(tmp_path)]
    assert runner.invoke(app, ["run", "new", "con", *SMALL, *data]).exit_code == 0
    result, out = _invoke("run", "materialize", "con", *STEPS, *data)
    assert result.exit_code == 0, out
    line = r"INFO (?:teacher_trajectories: )?episode run=con arm=teacher task=(\S+) trial=\d+ stop=\S+ reward=\S+ steps=\d+ .* [\d.]+s"
    episodes = re.findall(line, out)
    assert len(episodes) == 3 and len(set(episodes)) == 3
    assert "rollouts run=con arm=teacher done=3" in out and "step timings" in out
    timings = out.split("step timings (s):")[1].splitlines()
    assert {line.split()[0] for line in timings if line.strip()} >= {"total", "task_set", "teacher_trajectories"}
    # the round's progress at a steady interval (the first and the last episode at least), for the event log
    assert re.search(r"INFO (?:teacher_trajectories: )?teacher env0-oracle/oracle: 3/3 episodes \(100%\), passed \d", out)
    assert "STEP_START" not in out and "ASSET_MATERIALIZATION" not in out and " - dagster - DEBUG - " not in out

    from dagster._core.storage.dagster_run import RunsFilter

    from env0_posttrain.orchestration.launch import instance_for
    from env0_posttrain.util.paths import Paths

    instance = instance_for(Paths.from_env(tmp_path))  # the UI shows the same lines in the step's event log
    (run,) = instance.get_runs(RunsFilter(tags={"dagster/partition": "con"}), limit=1)
    logged = [e.user_message for e in instance.all_logs(run.run_id) if e.step_key == "teacher_trajectories"]
    assert sum(m.startswith("episode run=con arm=teacher") for m in logged) == 3
    assert any(m.startswith("teacher env0-oracle/oracle: 3/3 episodes (100%)") for m in logged)  # the UI's too

    result, out = _invoke("run", "materialize", "con", "--select", "task_set", "--verbose", *data)
    assert result.exit_code == 0 and "STEP_START" in out and "DEBUG" in out


def test_a_rollout_that_cannot_work_prints_one_message_naming_the_field(tmp_path: Path):
    class Refused(Env0Provider):
        async def respond(self, model, messages, options, meta, model_response):
            raise litellm.NotFoundError(message="The model `m` does not exist", llm_provider="x", model=model)

    register_provider("env0-cli-missing", Refused())
    data = ["--data-dir", str(tmp_path)]
    assert runner.invoke(app, ["run", "new", "bad", "--teacher", "env0-cli-missing/m", *SMALL, *data]).exit_code == 0
    result, out = _invoke("run", "materialize", "bad", *STEPS, *data)
    assert result.exit_code == 2
    assert out.count("Fix `teacher.model`") == 1 and "does not know this model id" in out
    assert "Stack Trace" not in out and "Traceback" not in out
    import dagster as dg
    from dagster._core.events import DagsterEventType
    from dagster._core.storage.dagster_run import RunsFilter

    from env0_posttrain.orchestration.launch import instance_for
    from env0_posttrain.util.paths import Paths

    instance = instance_for(Paths.from_env(tmp_path))
    (run,) = instance.get_runs(RunsFilter(tags={"dagster/partition": "bad"}, statuses=[dg.DagsterRunStatus.FAILURE]))
    retries = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.STEP_UP_FOR_RETRY).records
    assert retries == [], "the asset's RetryPolicy must not repeat a deterministic failure"


def test_training_shows_a_loss_bar_instead_of_raw_dicts(tmp_path: Path, capsys):
    torch = pytest.importorskip("torch")
    from datasets import Dataset
    from transformers import Qwen3Config, Qwen3ForCausalLM, Trainer, TrainingArguments

    from env0_posttrain.train.tracking.progress import LossProgress, show_progress

    torch.manual_seed(0)
    model = Qwen3ForCausalLM(Qwen3Config(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=1, head_dim=8))
    ds = Dataset.from_dict({"input_ids": [[1, 2, 3, 4]] * 8, "labels": [[1, 2, 3, 4]] * 8})
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=4, logging_steps=1, per_device_train_batch_size=2,
                             report_to=[], disable_tqdm=True, use_cpu=True, save_strategy="no")
    trainer = Trainer(model=model, args=args, train_dataset=ds)
    progress = show_progress(trainer, "test training")
    trainer.train()
    out, err = capsys.readouterr()
    assert "{'loss'" not in out + err, "no raw log dicts"
    assert "test training" in err and "4/4" in err and re.search(r"loss=\d\.\d{4}", err)
    assert isinstance(progress, LossProgress) and progress.bar is None  # closed, left on screen
