"""Inputs refused at the door: a run id that is not a plain name, a spec value that is not a finite number in its
range, and a `run materialize` whose spec file is missing, malformed or invalid each stop the command with one
red line naming what is wrong and exit status 2, before anything is written and before Dagster is touched (no
instance, no database)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from env0_posttrain.cli.main import app

runner = CliRunner()


def _one_line(args: list[str], root: Path, *words: str) -> str:
    result = runner.invoke(app, [*args, "--data-dir", str(root)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


def _untouched(root: Path) -> None:
    """Nothing ran: no Dagster instance, no store, no artifacts (the spec folder may hold what the test wrote)."""
    assert sorted(p.name for p in root.iterdir()) in ([], ["runs"]), sorted(root.iterdir())


@pytest.mark.parametrize("run_id", [".", "..", ".hidden", "_x", "a b", "a/b", "x...y", "x" * 129])
def test_run_new_refuses_a_run_id_that_is_not_a_plain_name(tmp_path: Path, run_id: str):
    _one_line(["run", "new", run_id], tmp_path, "run id", "cannot be used")
    _untouched(tmp_path)


@pytest.mark.parametrize("value, field", [
    ("lora.learning_rate=.inf", "lora.learning_rate"),
    ("lora.learning_rate=nan", "lora.learning_rate"),
    ("lora.learning_rate=1e3", "lora.learning_rate"),
    ("lora.max_steps=1e23", "lora.max_steps"),
    ("lora.max_steps=100000000000000000000000", "lora.max_steps"),
    ("eval.temperature=-.inf", "eval.temperature"),
    ("teacher.sampling.temperature=1e9", "teacher.sampling.temperature"),
    ("budget.max_steps=1000000000", "budget.max_steps"),
    ("tasks.seed=-1", "tasks.seed"),
    ("shell.timeout_s=.inf", "shell.timeout_s"),
    ("sft.min_reward=.nan", "sft.min_reward"),
    ("teacher.model=env0-oracle/oracle@.inf", "teacher.model"),
])
def test_run_new_refuses_a_number_out_of_range_in_one_line_naming_the_field(tmp_path: Path, value: str, field: str):
    line = _one_line(["run", "new", "r1", "--set", value], tmp_path, f"run 'r1': invalid run spec: {field}")
    assert line.count(":") >= 3, line  # source, field and why
    _untouched(tmp_path)


def test_a_suite_number_out_of_range_is_refused_naming_the_suite_field(tmp_path: Path):
    suite = "suites=[{name: fresh, kind: generated, sample: 10, seed: 1e40}]"
    _one_line(["run", "new", "r1", "--set", suite], tmp_path, "suites.0.seed")
    _untouched(tmp_path)


def test_demo_and_backfill_refuse_a_bad_run_id(tmp_path: Path):
    _one_line(["demo", "--run-id", ".."], tmp_path, "run id '..' cannot be used")
    _one_line(["backfill", "--from", "..", "--teacher", "openai/x"], tmp_path, "run id '..' cannot be used")
    _untouched(tmp_path)


def _spec(root: Path, run_id: str, text: str) -> Path:
    (root / "runs").mkdir(exist_ok=True)
    path = root / "runs" / f"{run_id}.yaml"
    path.write_text(text)
    return path


MATERIALIZE = {  # what is in data/runs/<id>.yaml -> words the one line must hold
    "missing": (None, ["run 'r1': no spec at", "run new r1"]),
    "malformed": ("run_id: r1\nlora: [1,\n", ["r1.yaml: not valid YAML (line 3"]),
    "not a mapping": ("- run_id\n", ["r1.yaml: a run spec must be a mapping"]),
    "unknown field": ("run_id: r1\nlora:\n  rank: 4\n", ["r1.yaml: invalid run spec: lora.rank (line 3)", "Extra"]),
    "infinite": ("run_id: r1\nlora:\n  learning_rate: .inf\n", ["lora.learning_rate (line 3)", "finite"]),
    "too many steps": ("run_id: r1\nlora:\n  max_steps: 1.0e+15\n", ["lora.max_steps (line 3)", "less than"]),
    "other run id": ("run_id: r2\n", ["r1.yaml: run_id 'r2' does not match the file name 'r1'"]),
    "missing folder": ("run_id: r1\ntasks:\n  source: /no/such/folder\n  templates: null\n",
                       ["r1.yaml: tasks.source (line 3): /no/such/folder is not a directory"]),
    "misspelt teacher": ("run_id: r1\nteacher:\n  model: env0-orcale/oracle\n",
                         ["r1.yaml: teacher.model (line 3): litellm cannot route", "did you mean 'env0-oracle'?"]),
    "misspelt field": ("run_id: r1\ntasks:\n  n_trian: 4\n", ["tasks.n_trian (line 3): unknown field; did you mean "
                                                              "`tasks.n_train`?"]),
}


@pytest.mark.parametrize("case", sorted(MATERIALIZE))
def test_run_materialize_checks_the_spec_before_any_run_starts(tmp_path: Path, case: str):
    text, words = MATERIALIZE[case]
    if text is not None:
        _spec(tmp_path, "r1", text)
    _one_line(["run", "materialize", "r1", "--select", "task_set"], tmp_path, *words)
    _untouched(tmp_path)


@pytest.mark.parametrize("run_id", [".", ".."])
def test_run_materialize_refuses_a_run_id_that_would_name_a_folder(tmp_path: Path, run_id: str):
    _spec(tmp_path, "x", "run_id: x\n")
    (tmp_path / "runs" / f"{run_id}.yaml").write_text(f"run_id: '{run_id}'\n")  # what older versions let through
    _one_line(["run", "materialize", run_id], tmp_path, f"run id '{run_id}' cannot be used")
    _untouched(tmp_path)
