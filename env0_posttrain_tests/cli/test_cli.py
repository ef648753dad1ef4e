"""The CLI: a bad spec is refused naming the field and registers nothing; `ui` serves and stops on SIGTERM."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from env0_posttrain.cli.main import app
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import load_spec
from env0_posttrain.store import Store

runner = CliRunner()


def _partitions(root: Path) -> list[str]:
    os.environ["DAGSTER_HOME"] = str(Paths.from_env(root).dagster_home)
    return dg.DagsterInstance.get().get_dynamic_partitions("run_id")


@pytest.mark.parametrize(
    "args, field",
    [
        (["run", "new", "bad,id"], "run id 'bad,id' cannot be used"),
        (["run", "new", "ok-id", "--set", "lora.rank=8"], "lora.rank"),
        (["run", "new", "ok-id", "--teacher", ""], "teacher.model"),
        (["run", "new", "ok-id", "--student", ""], "student.model"),
        (["run", "new", "ok-id", "--set", "eval.trials=0"], "eval.trials"),
    ],
)
def test_bad_spec_is_refused_and_nothing_is_registered(tmp_path: Path, args, field):
    result = runner.invoke(app, [*args, "--data-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert field in result.output
    assert not any((tmp_path / "runs").glob("*.yaml"))
    assert not (tmp_path / "env0.duckdb").exists()
    assert not (tmp_path / "dagster_home").exists()  # no instance touched, so no partition


def test_run_new_writes_the_spec_records_it_and_registers_the_partition(tmp_path: Path):
    result = runner.invoke(app, ["run", "new", "exp-1", "--set", "lora.r=16", "--teacher", "openai/gpt-5.4-mini",
                                 "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    spec = load_spec(tmp_path / "runs" / "exp-1.yaml")
    assert spec.lora.r == 16 and spec.teacher.model == "openai/gpt-5.4-mini"
    assert Store(tmp_path / "env0.duckdb").get_run("exp-1") == spec
    assert "exp-1" in _partitions(tmp_path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_ui(data: Path, artifacts_port: int | None = None, **popen) -> tuple[subprocess.Popen, bool]:
    """`env0-posttrain ui` on free ports in its own session; (the process, whether it answered within 240 s)."""
    port = _free_port()
    exe = Path(sys.executable).with_name("env0-posttrain")
    proc = subprocess.Popen([str(exe), "ui", "--port", str(port), "--data-dir", str(data),
                             "--artifacts-port", str(artifacts_port or _free_port())],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, **popen)
    deadline, up = time.time() + 240, False
    while time.time() < deadline and not up and proc.poll() is None:
        try:
            up = urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2).status == 200
        except OSError:
            time.sleep(1)
    return proc, up


@pytest.mark.slow
def test_ui_serves_on_loopback_and_stops_on_sigterm(tmp_path: Path):
    artifacts = _free_port()
    (tmp_path / "artifacts" / "r").mkdir(parents=True)
    (tmp_path / "artifacts" / "r" / "report.md").write_text("# the report")
    proc, up = _start_ui(tmp_path, artifacts)
    try:
        assert up, "the UI never answered"
        assert (tmp_path / "dagster_home" / "dagster.yaml").exists()
        with urllib.request.urlopen(f"http://127.0.0.1:{artifacts}/artifacts/r/report.md", timeout=10) as r:
            assert r.read() == b"# the report"  # the artifact server beside the UI
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _descendants(pid: int) -> list[int]:
    import psutil

    return [c.pid for c in psutil.Process(pid).children(recursive=True)]


@pytest.mark.slow
def test_ui_stops_with_its_whole_tree_on_sigint_even_when_started_with_sigint_ignored(tmp_path: Path):
    """A script's background job (`env0-posttrain ui &`) starts with SIGINT ignored: `kill -INT PID` must still
    stop it, and the webserver, daemon and code servers under it."""
    import psutil

    proc, up = _start_ui(tmp_path, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert up, "the UI never answered"
        tree = _descendants(proc.pid)
        assert tree, "dagster dev runs under ui"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=90) == 0
        gone, alive = psutil.wait_procs([psutil.Process(p) for p in tree if psutil.pid_exists(p)], timeout=60)
        assert alive == [], [p.cmdline() for p in alive]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
