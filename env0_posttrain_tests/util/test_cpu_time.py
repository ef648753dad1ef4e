"""A step's CPU seconds count the children it waited for (a Pipes worker, rollout processes), and every stage's
result carries them with the load average at its end (what bench/demo_stages.py tabulates)."""

from __future__ import annotations

import subprocess
import sys

from env0_posttrain.defs.metadata import run_stage
from env0_posttrain.stages.context import StageResult
from env0_posttrain.util.cpu_time import cpu_seconds, step_usage

BUSY = "import resource\nx = 0\nwhile resource.getrusage(resource.RUSAGE_SELF).ru_utime < 0.3:\n    x += 1\n"


def test_a_waited_for_childs_cpu_is_counted():
    before = cpu_seconds()
    subprocess.run([sys.executable, "-c", BUSY], check=True)  # burns 0.3 s of its own CPU, whatever the load
    assert cpu_seconds() - before >= 0.3


def test_every_stage_result_carries_its_usage():
    def stage(n: int) -> StageResult:
        subprocess.run([sys.executable, "-c", BUSY], check=True)
        return StageResult(metadata={"n": n}, data_version="v")

    result = run_stage(stage, 3)
    assert result.metadata["n"] == 3
    assert result.metadata["cpu_seconds"] >= 0.3 and result.metadata["load_average"] >= 0.0
    assert set(step_usage(cpu_seconds())) == {"cpu_seconds", "load_average"}
