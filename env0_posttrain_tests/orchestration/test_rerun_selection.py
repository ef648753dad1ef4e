"""A re-run of a partition materializes only what is missing, failed or stale (orchestration/needed.py), asked
again after each pass, on a graph shaped like a run's (teacher -> sft -> lora -> sft eval -> report, a base
eval beside them) whose assets count their executions: `materialize_run` swaps it in for the real one."""

import shutil
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.orchestration import launch
from env0_posttrain.orchestration.needed import asset_states
from env0_posttrain.util.paths import Paths

RUN = "rerun"
RAN: Counter = Counter()
CRASH: set[str] = set()
DATA = {"sft": "rows-1"}
GATE = {"passed": True}


def _graph(sft_code: str = "1") -> list[dg.AssetsDefinition]:
    def asset(name: str, deps: list, code: str = "1", check: bool = False):
        specs = [dg.AssetCheckSpec("gate", asset=name, blocking=True)] if check else []

        @dg.asset(name=name, partitions_def=run_partitions, deps=deps, code_version=code, check_specs=specs,
                  pool="duckdb_writer")
        def _a(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
            RAN[name] += 1
            if name in CRASH:
                raise RuntimeError(f"{name}: killed")
            return dg.MaterializeResult(
                data_version=dg.DataVersion(f"adapter-{DATA['sft']}" if name == "lora" else DATA.get(name, "v1")),
                check_results=[dg.AssetCheckResult(passed=GATE["passed"])] if check else None)
        return _a

    teacher = asset("teacher", [], check=True)
    sft = asset("sft", [teacher], code=sft_code)
    lora = asset("lora", [sft])
    base_eval = asset("base_eval", [teacher])
    sft_eval = asset("sft_eval", [lora])
    report = asset("report", [base_eval, sft_eval])
    return [teacher, sft, lora, base_eval, sft_eval, report]


@pytest.fixture
def env(tmp_path: Path, monkeypatch):
    RAN.clear()
    CRASH.clear()
    DATA.clear()
    DATA["sft"] = "rows-1"
    GATE["passed"] = True
    monkeypatch.setattr(launch, "RUN_ASSETS", _graph())
    paths = Paths(tmp_path / "data")
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(launch.REPO_ROOT / "dagster.yaml", home / "dagster.yaml")  # the project's pools and limits
    instance = dg.DagsterInstance.local_temp(str(home))

    def run(**kw) -> launch.Materialization:
        return launch.materialize_run(RUN, paths, instance, None, log_level="WARNING", **kw)

    yield instance, run
    instance.dispose()


def test_a_rerun_after_a_kill_in_lora_runs_only_lora_and_what_never_ran(env):
    instance, run = env
    CRASH.add("lora")
    first = run()
    assert not first.success and RAN == Counter(teacher=1, sft=1, lora=1, base_eval=1)
    CRASH.clear()

    second = run()
    assert second.success and RAN == Counter(teacher=1, sft=1, lora=2, base_eval=1, sft_eval=1, report=1)
    assert second.reasons == {"lora": "failed", "sft_eval": "failed", "report": "failed"}  # planned, never made

    third = run()  # everything up to date: no run at all
    assert third.results == [] and RAN["teacher"] == 1 and RAN["report"] == 1


def test_a_stale_asset_runs_and_what_its_new_data_makes_stale_runs_in_the_next_pass(env, monkeypatch):
    instance, run = env
    run()
    RAN.clear()
    monkeypatch.setattr(launch, "RUN_ASSETS", _graph(sft_code="2"))  # the SFT conversion's code changed
    DATA["sft"] = "rows-2"  # ... and its rows with it
    states = asset_states(instance, launch.RUN_ASSETS, RUN)
    assert [k.to_user_string() for k, why in states.items() if why] == ["sft"]
    assert "new code version" in states[dg.AssetKey("sft")]

    done = run()
    # sft's new rows make lora stale, lora's new adapter sft_eval; sft_eval's data is unchanged, so not the report
    assert RAN == Counter(sft=1, lora=1, sft_eval=1), "the teacher and the base eval are not run again"
    assert len(done.results) == 3 and done.reasons["lora"].startswith("stale: sft")


def test_a_failed_blocking_check_keeps_its_asset_needed_until_it_passes(env):
    instance, run = env
    GATE["passed"] = False
    assert not run().success and RAN == Counter(teacher=1), "the gate held: nothing downstream ran"
    assert asset_states(instance, launch.RUN_ASSETS, RUN)[dg.AssetKey("teacher")] == "blocking check failed: gate"

    GATE["passed"] = True
    assert run().success and RAN == Counter(teacher=2, sft=1, lora=1, base_eval=1, sft_eval=1, report=1)


def test_recollect_adds_the_teacher_and_tags_the_run_for_its_stage(env, monkeypatch):
    instance, run = env
    monkeypatch.setattr(launch, "RECOLLECTED_ASSET", {"teacher": "teacher"})
    run()
    RAN.clear()
    DATA["teacher"] = "v2"  # a new round: new episodes
    done = run(recollect=["teacher"])
    assert done.reasons["teacher"] == "asked for" and done.results[0].dagster_run.tags["env0/recollect"] == "teacher"
    assert RAN == Counter(teacher=1, sft=1, base_eval=1), "what reads the new teacher data ran; sft's rows did not change"
