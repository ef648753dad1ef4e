"""The code passes the linter configured in pyproject.toml ([tool.ruff]); CI runs it through this test."""

from __future__ import annotations

import subprocess
import sys

from env0_posttrain_tests.support.paths import REPO as ROOT


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "env0_posttrain", "env0_posttrain_tests", "bench"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
