"""`env0-posttrain automation`: the schedules' and sensors' on/off state, as the daemon will read it."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from env0_posttrain.cli.main import app

runner = CliRunner()


def _states(out: str) -> dict[str, tuple[str, str]]:
    """name -> (state now, default) from the status table."""
    pattern = r"^(?:schedule|sensor)\s+(\S+)\s+(RUNNING|STOPPED)\s+\(default (\w+)\)"
    return {m[1]: (m[2], m[3]) for m in re.finditer(pattern, out, re.M)}


def test_defaults_start_stop_and_unknown_names(tmp_path: Path):
    data = ["--data-dir", str(tmp_path)]
    status = runner.invoke(app, ["automation", "status", *data])
    assert status.exit_code == 0, status.output
    assert _states(status.output) == {"nightly_eval_schedule": ("STOPPED", "STOPPED"),
                                      "default_automation_condition_sensor": ("STOPPED", "STOPPED"),
                                      "run_spec_sensor": ("RUNNING", "RUNNING"),
                                      "teacher_table_sensor": ("RUNNING", "RUNNING")}

    started = runner.invoke(app, ["automation", "start", "nightly_eval_schedule", "default_automation_condition_sensor",
                                  *data])
    assert started.exit_code == 0 and "daemon" in started.output
    stopped = runner.invoke(app, ["automation", "stop", "run_spec_sensor", *data])
    assert stopped.exit_code == 0
    assert _states(runner.invoke(app, ["automation", "status", *data]).output) == {
        "nightly_eval_schedule": ("RUNNING", "STOPPED"),
        "default_automation_condition_sensor": ("RUNNING", "STOPPED"),
        "run_spec_sensor": ("STOPPED", "RUNNING"),
        "teacher_table_sensor": ("RUNNING", "RUNNING")}

    bad = runner.invoke(app, ["automation", "start", "nightly", *data])
    assert bad.exit_code == 2 and "nightly_eval_schedule" in bad.output  # names the known ones
