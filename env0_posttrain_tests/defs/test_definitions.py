"""The whole Definitions loads, and its wiring is the graph of DESIGN.md."""

import subprocess
import sys
from pathlib import Path

import dagster as dg

from env0_posttrain.definitions import CODE_LOCATION, defs
from env0_posttrain_tests.support.paths import REPO as ROOT

ASSETS = [
    "task_set", "eval_suites", "base_model", "teacher_trajectories", "sft_rows", "lora_adapter", "base_eval_trajectories",
    "sft_eval_trajectories", "teacher_eval_trajectories", "rl_adapter", "rl_eval_trajectories", "onpolicy_adapter",
    "onpolicy_eval_trajectories", "comparison_report", "teacher_table",
]


def _graph():
    return defs.resolve_asset_graph()


def test_every_asset_on_one_run_id_partition():
    graph = _graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == set(ASSETS)
    for name in ASSETS:
        pd = graph.get(dg.AssetKey(name)).partitions_def
        assert isinstance(pd, dg.DynamicPartitionsDefinition) and pd.name == "run_id"


def test_the_defs_folder_declares_every_job_schedule_and_sensor_once():
    assert sorted(j.name for j in defs.jobs) == ["delete_orphan_partitions", "full_run", "new_run", "nightly_eval",
                                                 "teacher_backfill", "teacher_table_refresh"]
    assert [s.name for s in defs.schedules] == ["nightly_eval_schedule"]
    assert sorted(s.name for s in defs.sensors) == ["run_spec_sensor", "teacher_table_sensor"]
    assert all(j.description for j in defs.jobs) and all(s.description for s in [*defs.schedules, *defs.sensors])
    assert sorted(a.key.to_user_string() for a in defs.assets) == sorted(ASSETS)


def test_lineage_matches_design():
    graph = _graph()

    def ancestors(name: str) -> set[str]:
        return {k.to_user_string() for k in graph.get(dg.AssetKey(name)).parent_keys}

    assert ancestors("base_model") == {"task_set"}  # the tiny student reads the training requests
    assert ancestors("teacher_trajectories") == {"task_set", "base_model"}  # (a teacher may be the base itself)
    assert ancestors("sft_rows") == {"teacher_trajectories", "base_model"}  # the student's tokenizer
    assert ancestors("lora_adapter") == {"sft_rows", "base_model"}
    assert ancestors("eval_suites") == {"task_set"}  # the suites' boundaries are measured against the train split
    assert ancestors("base_eval_trajectories") == {"task_set", "eval_suites", "base_model"}  # never the adapter
    assert "lora_adapter" in ancestors("sft_eval_trajectories")
    assert ancestors("teacher_eval_trajectories") == {"task_set", "eval_suites", "base_model"}
    assert {"base_eval_trajectories", "sft_eval_trajectories", "teacher_eval_trajectories"} <= ancestors("comparison_report")


def test_blocking_checks_are_declared():
    graph = _graph()
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    assert {("task_set", "split_disjoint"), ("sft_rows", "rows_valid"), ("sft_rows", "expected_row_count"),
            ("lora_adapter", "adapter_learned"), ("teacher_trajectories", "teacher_pass_rate_floor"),
            ("base_eval_trajectories", "no_unscored_rows")} <= checks


def test_dagster_cli_validates_the_code_location(tmp_path: Path):
    (tmp_path / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    out = subprocess.run(
        [str(Path(sys.executable).with_name("dagster")), "definitions", "validate", "-w", str(ROOT / "workspace.yaml")],
        cwd=ROOT, env={"DAGSTER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"Validation successful for code location {CODE_LOCATION}" in out.stderr + out.stdout


def test_assets_sit_in_concurrency_pools():
    from env0_posttrain.defs.assets import RUN_ASSETS

    pools = {a.key.to_user_string(): next(iter(a.op.pools), None) for a in RUN_ASSETS}
    assert pools["lora_adapter"] == pools["base_model"] == pools["rl_adapter"] == pools["onpolicy_adapter"] == "gpu"
    assert pools["onpolicy_eval_trajectories"] == "student_inference"
    assert pools["teacher_trajectories"] == pools["teacher_eval_trajectories"] == "teacher_api"
    assert pools["base_eval_trajectories"] == pools["sft_eval_trajectories"] == "student_inference"
    assert pools["sft_rows"] == pools["comparison_report"] == "duckdb_writer"
    assert pools["task_set"] == pools["eval_suites"] == "task_import"  # minutes of imports hold no writer slot


def test_assets_carry_code_versions_from_their_packages():
    graph = _graph()
    versions = {name: graph.get(dg.AssetKey(name)).code_version for name in ASSETS}
    assert all(versions.values())
    assert versions["base_eval_trajectories"] == versions["sft_eval_trajectories"]  # both are the agent's code
    assert versions["lora_adapter"] != versions["sft_rows"]


def test_the_code_location_loads_without_litellm_or_torch():
    """Every step process (and the code server) loads the code location: it must not pay for litellm's or torch's
    import (seconds each) before the step's own stage asks for them."""
    out = subprocess.run([sys.executable, "-c", "import sys, env0_posttrain.definitions; "
                          "print(sorted(m for m in ('litellm', 'torch', 'transformers') if m in sys.modules))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
