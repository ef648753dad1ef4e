"""Failures said where the user looks: a failed step's own error on the command line, and one red line with exit
status 2 (no traceback) for a malformed `--set` value, a full disk and a data dir that cannot be written; reads
(`run list`) need no write access at all."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from env0_posttrain.cli.main import app
from env0_posttrain.cli.errors import operating_error

runner = CliRunner()


def _new(root: Path, run_id: str = "r1") -> None:
    result = runner.invoke(app, ["run", "new", run_id, "--preset", "demo", "--data-dir", str(root)])
    assert result.exit_code == 0, result.output


def _one_line_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize("value", ["lora.r=[1,", "tasks.families={a: b", "lora.r=: :"])
def test_a_malformed_yaml_value_in_set_is_one_line_naming_it(tmp_path: Path, value):
    result = runner.invoke(app, ["run", "new", "x", "--set", value, "--data-dir", str(tmp_path)])
    _one_line_error(result, "--set", value.split("=")[0], "not valid YAML")
    assert not (tmp_path / "runs").exists()


def test_a_failed_step_prints_its_own_error_and_not_only_its_name(tmp_path: Path):
    empty = tmp_path / "no-packages"
    empty.mkdir()  # a folder that exists passes the checks at the door; the task_set step finds nothing in it
    result = runner.invoke(app, ["run", "new", "r1", "--preset", "default", "--set", f"tasks.source={empty}",
                                 "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["run", "materialize", "r1", "--select", "task_set", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "task_set failed: ValueError" in result.output
    assert f"tasks.source {empty}: no env0 package" in result.output
    assert "DagsterExecutionStepExecutionError" not in result.output  # Dagster's wrapper says nothing new


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(root.rglob("*"))}


def test_run_list_writes_nothing_in_the_data_dir(tmp_path: Path):
    _new(tmp_path)
    (tmp_path / "env0.duckdb.lock").unlink()
    before = _files(tmp_path)
    result = runner.invoke(app, ["run", "list", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0 and "r1" in result.output, result.output
    assert _files(tmp_path) == before  # no lock file created, no schema written, the database untouched


def test_run_list_of_a_data_dir_without_a_database_lists_the_specs(tmp_path: Path):
    _new(tmp_path)
    (tmp_path / "env0.duckdb").unlink()
    result = runner.invoke(app, ["run", "list", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0 and "r1" in result.output and "(no report yet)" in result.output
    assert not (tmp_path / "env0.duckdb").exists()


@pytest.fixture()
def immutable(tmp_path: Path):
    """Make paths unwritable even for root (chattr +i); undone after the test."""
    made: list[Path] = []

    def freeze(*paths: Path) -> None:
        for p in paths:
            if subprocess.run(["chattr", "+i", str(p)], capture_output=True).returncode != 0:
                pytest.skip("chattr +i is not available here")
            made.append(p)

    yield freeze
    for p in reversed(made):
        subprocess.run(["chattr", "-i", str(p)], capture_output=True)


def test_a_read_only_data_dir_reads_and_refuses_writes_in_one_line(tmp_path: Path, immutable):
    _new(tmp_path)
    immutable(*sorted(tmp_path.rglob("*"), key=lambda p: -len(p.parts)), tmp_path)
    listed = runner.invoke(app, ["run", "list", "--data-dir", str(tmp_path)])
    assert listed.exit_code == 0 and "r1" in listed.output, listed.output
    _one_line_error(runner.invoke(app, ["run", "new", "r2", "--data-dir", str(tmp_path)]), "cannot write the data dir")
    _one_line_error(runner.invoke(app, ["run", "materialize", "r1", "--data-dir", str(tmp_path)]),
                    "cannot write the data dir")


def test_a_full_disk_is_one_line_saying_so(tmp_path: Path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        _new(mnt / "d")
        with open(mnt / "filler", "wb") as f:  # leave a few KB: the first write of the run's events fails
            free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
            f.write(b"\0" * max(0, free - 8192))
        result = runner.invoke(app, ["run", "materialize", "r1", "--select", "task_set", "--data-dir", str(mnt / "d")])
        _one_line_error(result, "the disk is full", "Free space")
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_the_drivers_words_for_a_full_disk_and_a_read_only_dir_are_recognised_along_the_cause_chain():
    import sqlalchemy.exc

    wrapped = sqlalchemy.exc.OperationalError("INSERT INTO event_logs", {}, sqlite3.OperationalError("disk I/O error"))
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device", "/data/ckpt/adapter.safetensors")
        except OSError as inner:
            raise RuntimeError("checkpoint save failed") from inner
    except RuntimeError as outer:
        chained = outer
    assert "disk is full" in operating_error(wrapped)
    assert "disk is full" in operating_error(chained) and "adapter.safetensors" in operating_error(chained)
    assert "cannot write" in operating_error(OSError(errno.EROFS, "Read-only file system", "/data/x"))
    assert operating_error(ValueError("tasks.n_train: bad")) is None
