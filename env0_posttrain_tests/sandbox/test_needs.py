"""A spec that puts commands in the sandbox is refused in one line naming the apt command where bubblewrap is not
installed, before it runs; `run new` says it too."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from env0_posttrain.cli.main import app
from env0_posttrain.sandbox.needs import sandbox_refusals
from env0_posttrain.spec.runspec import RunSpec

APT = "apt-get install -y bubblewrap libseccomp2"


def _which(*present: str):
    return lambda name: f"/usr/bin/{name}" if name in present else None


def test_a_spec_that_needs_the_sandbox_is_refused_in_one_line_before_it_runs(tmp_path):
    spec = RunSpec.model_validate({"run_id": "pk", "tasks": {"source": str(tmp_path)}, "eval": {"surface": "shell"},
                                   "teacher": {"surface": "shell"}})
    lines = sandbox_refusals(spec, _which("unshare"), {})
    assert [line.split(":")[0] for line in lines] == ["teacher.surface", "eval.surface", "tasks.source"]
    assert all(f"`{APT}`" in line and "bwrap not installed" in line for line in lines)
    unconfined = {"ENV0_SANDBOX": "unconfined"}
    assert [line.split(":")[0] for line in sandbox_refusals(spec, _which("unshare"), unconfined)] == [
        "teacher.surface", "eval.surface"]
    assert sandbox_refusals(spec, _which("bwrap", "unshare"), {}) == []
    assert sandbox_refusals(RunSpec.model_validate({"run_id": "demo"}), _which(), {}) == []


def test_run_new_names_the_apt_command(tmp_path: Path, monkeypatch):
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    result = CliRunner().invoke(app, ["run", "new", "pk", "--preset", "default", "--set", f"tasks.source={tmp_path}",
                                      "--data-dir",
                                      str(tmp_path / "data")])
    assert result.exit_code != 0
    assert f"tasks.source: env0 packages run their scripts in the bubblewrap sandbox, bwrap and unshare not " \
           f"installed here: `{APT}`" in result.output.replace("\n", "")
    assert not (tmp_path / "data" / "runs" / "pk.yaml").exists()
