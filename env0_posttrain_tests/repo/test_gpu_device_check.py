"""The lent-GPU device check's CPU path (`--cpu-tiny`): every part runs and lands in one table; a part that hangs
or fails becomes its row while the others still report; the pack leaves out what the image has."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from env0_posttrain_tests.support.paths import REPO

BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import gpu_device_check as check  # noqa: E402
import gpu_device_pack as pack  # noqa: E402


@pytest.mark.slow
def test_the_cpu_path_runs_every_part_into_one_table(tmp_path):
    env = dict(os.environ, DAGSTER_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    run = subprocess.run([sys.executable, str(BENCH / "gpu_device_check.py"), "--cpu-tiny", "--out", str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = json.loads((tmp_path / "device_check.json").read_text())["rows"]
    assert [r["part"] for r in rows] == list(check.PARTS)
    assert all(r["status"] == "ok" for r in rows), [(r["part"], r["status"], r.get("log_tail")) for r in rows]
    fig = {r["part"]: r["figures"] for r in rows}
    assert fig["env"]["device"] == "cpu"
    assert fig["demo"]["train_device"] == "cpu" and fig["demo"]["probe_prompts"] == 2
    assert fig["demo"]["tensorboard_files"] >= 1
    assert fig["mid"]["eval_arm"]["episodes"] == 4 and fig["mid"]["eval_arm"]["device"] == "cpu"
    assert set(fig["mid"]["generate_tokens_per_s"]) == {"batch_1", "batch_4"}
    assert {"40GiB", "80GiB"} <= set(fig["bench9b"]) and all("step_s" in v for v in fig["bench9b"].values())
    markdown = (tmp_path / "device_check.md").read_text()
    assert markdown.startswith("| part | status | s | figures |") and markdown in run.stdout


def test_a_part_that_hangs_or_fails_is_its_row(tmp_path):
    hang = check.run_part("mid", True, 1.0, tmp_path, cmd=[sys.executable, "-c", "import time; time.sleep(300)"])
    assert hang["status"] == "timed out after 1 s" and hang["figures"] == {}
    (tmp_path / "bench9b.json").write_text("{}")  # a stale result from an earlier run is not reported
    script = ("import json, pathlib, sys; pathlib.Path(sys.argv[1]).write_text(json.dumps({'figures': "
              "{'40GiB': {'step_s': 9.4}}})); raise SystemExit(3)")
    failed = check.run_part("bench9b", True, 60, tmp_path,
                            cmd=[sys.executable, "-c", script, str(tmp_path / "bench9b.json")])
    assert failed["status"] == "failed (exit 3)" and failed["figures"] == {"40GiB": {"step_s": 9.4}}
    text = check.table([hang, failed])
    assert "| mid | timed out after 1 s |" in text and "| bench9b | failed (exit 3) |" in text and "9.4" in text


def test_the_pack_carries_the_closure_less_the_image_plus_the_kernels():
    carried = pack.to_carry("3.12")
    assert {"trl", "datasets", "pydantic", "litellm", "dagster", "duckdb", "mcp", "httpx2"} <= set(carried)
    assert {"transformers", "tokenizers", "peft"} <= set(carried)  # the image has other versions of these
    assert carried["liger-kernel"] == "0.8.5" and carried["fla-core"] == "0.6.0"
    assert not {"torch", "numpy", "scipy", "tensorboard", "accelerate", "kubernetes"} & set(carried)
    assert not [n for n in carried if n.startswith(("nvidia-", "triton"))]
