"""TITO end to end in the graph: a vLLM-shaped teacher asked for its token ids, token rows from them,
the spec's tito_source / upweight_mode acting, and the blocking drift check on sft_rows."""

from __future__ import annotations

import logging
from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain.stages.context import CheckOutcome, StageContext, StageResult, load_tasks
from env0_posttrain.stages.sft_rows import build_sft_rows
from env0_posttrain.stages.task_set import build_task_set
from env0_posttrain.stages.teacher_trajectories import collect_teacher
from env0_posttrain.agent import serve_tasks
from env0_posttrain.defs.assets import sft_rows, task_set, teacher_trajectories
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec, write_spec
from env0_posttrain.store import Store
from env0_posttrain.tasks import starter_template_ids
from env0_posttrain_tests.support.openai_stub import StubServer, StubState
from env0_posttrain_tests.sft.test_support import QWEN35_TEMPLATE_PATH, tiny_tokenizer

THINK_TEMPLATE = (QWEN35_TEMPLATE_PATH.parent / "qwen3_5_think.jinja").read_text()


def _spec(run_id: str, url: str, student: Path, **sft):
    return parse_spec({
        "run_id": run_id,
        "tasks": {"n_train": 4, "n_eval": 1, "seed": 3, "templates": starter_template_ids(max_calls=1)},
        "teacher": {"model": "hosted_vllm/teacher", "api_base": url, "concurrency": 4, "min_pass_rate": 0.0,
                    "max_steps": 4},
        "student": {"model": str(student)},
        "sft": {"format": "tito", **sft},
    }, run_id)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    student = root / "student"
    tiny_tokenizer().save_pretrained(student)  # the student's tokenizer is all sft_rows needs
    state = StubState(models={"teacher": "oracle"}, tokenizer=tiny_tokenizer())
    with StubServer(state) as url:
        yield Paths.from_env(root), url, student, state


def _stage_run(world, run_id: str, **sft) -> StageResult:
    """task_set and the teacher as stages, then sft_rows: for the variants of the spec."""
    paths, url, student, state = world
    write_spec(_spec(run_id, url, student, **sft), paths.runs)
    ctx = StageContext.load(run_id, paths, logging.getLogger("test"))
    build_task_set(ctx)
    with serve_tasks(load_tasks(ctx, ("train",))):  # the stub plays the oracle for these tasks
        collect_teacher(ctx)
    return build_sft_rows(ctx)


def _checks(result: StageResult) -> dict[str, CheckOutcome]:
    return {c.name: c for c in result.checks}


def test_tito_rows_from_captured_ids_through_the_asset_graph(world):
    paths, url, student, state = world
    run = "tito-graph"
    write_spec(_spec(run, url, student, first_turn_weight=4, upweight_mode="weight"), paths.runs)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("run_id", [run])
    resources = {"env0": Env0Resource(data_dir=str(paths.root))}
    assert dg.materialize([task_set], partition_key=run, instance=instance, resources=resources).success
    served = load_tasks(StageContext.load(run, paths), ("train", "eval"))
    n_before = len(state.requests)
    with serve_tasks(served):  # the stub plays the oracle for these tasks
        result = dg.materialize([teacher_trajectories, sft_rows], partition_key=run, instance=instance,
                                resources=resources, selection=[teacher_trajectories, sft_rows])
    assert result.success
    sent = state.requests[n_before:]
    assert sent and all(r.get("return_token_ids") is True for r in sent)  # the spec asked vLLM for its ids

    checks = {c.check_name: c for c in result.get_asset_check_evaluations() if c.asset_key.to_user_string() == "sft_rows"}
    assert checks["tito_drift"].passed and checks["rows_valid"].passed and checks["expected_row_count"].passed
    drift_meta = checks["tito_drift"].metadata
    assert drift_meta["exchanges_checked"].value == len(sent) and drift_meta["drifted_episodes"].value == 0

    rows = Store(paths.db).load_sft_rows(run)
    assert rows and {r["origin"] for r in rows} == {"native"}
    assert {r["weight"] for r in rows if r["turn"] == 0} == {4.0} and {r["weight"] for r in rows if r["turn"]} == {1.0}
    captured = Store(paths.db).load_episodes(Store(paths.db).latest_round(run, "teacher"))
    first = captured[0].exchanges[0]
    row = next(r for r in rows if r["source"]["task_id"] == captured[0].task_id and r["turn"] == 0)
    assert row["input_ids"] == first.prompt_token_ids + first.completion_token_ids  # the exact captured ids
    assert row["completion_mask"] == [0] * len(first.prompt_token_ids) + [1] * len(first.completion_token_ids)
    assert (paths.artifacts(run) / "sft" / "tito.jsonl").stat().st_size > 0
    import pyarrow.parquet as pq

    table = pq.read_table(paths.artifacts(run) / "sft" / "tito.parquet").to_pylist()
    assert [t["input_ids"] + t["output_ids"] for t in table] == [r["input_ids"] for r in rows]
    assert [t["weight"] for t in table] == [r["weight"] for r in rows]


def test_upweighting_by_repetition_copies_first_turn_rows(world):
    result = _stage_run(world, "tito-repeat", first_turn_weight=3, upweight_mode="repeat")
    rows = Store(world[0].db).load_sft_rows("tito-repeat")
    assert {r["weight"] for r in rows} == {1.0}
    episodes = result.metadata["kept_episodes"]
    assert sum(r["turn"] == 0 for r in rows) == 3 * episodes and result.metadata["upweight_copies"] == 2 * episodes


def test_retokenise_asks_for_no_ids_and_renders_with_the_students_template(world):
    state = world[3]
    n_before = len(state.requests)
    result = _stage_run(world, "tito-retok", tito_source="retokenise")
    assert not any(r.get("return_token_ids") for r in state.requests[n_before:])
    rows = Store(world[0].db).load_sft_rows("tito-retok")
    assert rows and {r["origin"] for r in rows} == {"retokenised"}
    assert result.metadata["rows_by_origin"] == {"retokenised": len(rows)}
    assert _checks(result)["tito_drift"].description.startswith("no captured ids")


def test_a_teacher_rendering_another_template_drifts_and_blocks(world):
    state = world[3]
    state.capture_template = THINK_TEMPLATE  # the server renders prompts its own way, as the seed's vLLM did
    try:
        blocked = _stage_run(world, "tito-drift")
        reported = _stage_run(world, "tito-drift-off", drift_check=False)
        native_only = _stage_run(world, "tito-drift-native", tito_source="native")
        state.always_return_ids = True
        retokenised = _stage_run(world, "tito-drift-retok", tito_source="retokenise")
    finally:
        state.capture_template, state.always_return_ids = None, False
    check = _checks(blocked)["tito_drift"]
    assert not check.passed and check.metadata["drifted_episodes"] == check.metadata["episodes"] > 0
    assert "captured" in check.metadata["drifts"][0] and "input" in check.metadata["drifted_exchanges_by_part"]
    off = _checks(reported)["tito_drift"]
    assert off.passed and "does not block" in off.description and off.metadata["drifted_episodes"] > 0
    # native rows are still the server's ids, drift or not: the check is what tells them apart
    assert {r["origin"] for r in Store(world[0].db).load_sft_rows("tito-drift-native")} == {"native"}
    assert not _checks(native_only)["tito_drift"].passed
    # re-rendered rows never carry the server's ids: the drift is shown, and does not block
    retok = _checks(retokenised)["tito_drift"]
    assert retok.passed and retok.metadata["drifted_episodes"] > 0 and "tito_source retokenise" in retok.description
    assert {r["origin"] for r in Store(world[0].db).load_sft_rows("tito-drift-retok")} == {"retokenised"}


def test_the_drift_check_is_also_a_command(world):
    from typer.testing import CliRunner

    from env0_posttrain.cli.main import app

    paths, _, student, state = world
    state.capture_template = THINK_TEMPLATE
    try:
        _stage_run(world, "tito-cli-drift")
    finally:
        state.capture_template = None
    _stage_run(world, "tito-cli-clean")
    runner = CliRunner()
    drifted = runner.invoke(app, ["sft", "drift", str(paths.artifacts("tito-cli-drift") / "teacher" / "results.jsonl"),
                                  "--tokenizer", str(student)])
    assert drifted.exit_code == 1 and "4 rows drifted" in drifted.output and "captured" in drifted.output
    clean = runner.invoke(app, ["sft", "drift", str(paths.artifacts("tito-cli-clean") / "teacher" / "results.jsonl"),
                                "--tokenizer", str(student)])
    assert clean.exit_code == 0 and "0 rows drifted" in clean.output


def test_chat_rows_report_the_drift_check_as_not_applicable(world):
    result = _stage_run(world, "chat-rows", format="messages")
    check = _checks(result)["tito_drift"]
    assert check.passed is None and check.metadata == {"checked": False} and "chat rows" in check.description
    assert all("messages" in r for r in Store(world[0].db).load_sft_rows("chat-rows"))


def test_the_runs_own_student_is_a_token_id_returning_teacher(tmp_path):
    """`teacher.model: env0-local/student` serves the run's base student in-process; its replies carry ids."""
    from env0_posttrain.train.synthetic_rows import make_synthetic_set
    from env0_posttrain.train.tiny_student.build import ensure_tiny_student
    from env0_posttrain_tests.train.test_lora import STUDENT

    data = make_synthetic_set(8, 2, seed=2)
    student = ensure_tiny_student(tmp_path / "students", data.corpus, data.entities, STUDENT)
    paths = Paths.from_env(tmp_path / "data")
    spec = parse_spec({
        "run_id": "self-teacher",
        "tasks": {"n_train": 3, "n_eval": 1, "seed": 3, "templates": starter_template_ids(max_calls=1)},
        "teacher": {"model": "env0-local/student", "min_pass_rate": 0.0, "max_steps": 2,
                    "sampling": {"temperature": 1.0, "max_tokens": 24}},  # an 8-step base says nothing greedily
        "student": {"model": str(student)},
        "sft": {"format": "tito", "tito_source": "native"},
    }, "self-teacher")
    write_spec(spec, paths.runs)
    ctx = StageContext.load("self-teacher", paths, logging.getLogger("test"))
    build_task_set(ctx)
    teacher = collect_teacher(ctx)
    episodes = ctx.store.load_episodes(teacher.metadata["round_id"])
    exchanges = [x for e in episodes for x in e.exchanges if x.response is not None]
    assert episodes and all(x.prompt_token_ids and x.completion_token_ids for x in exchanges)
    result = build_sft_rows(ctx)
    rows = ctx.store.load_sft_rows("self-teacher")
    assert rows, (result.metadata, [(c.name, c.description) for c in result.checks])
    assert {r["origin"] for r in rows} == {"native"} and result.metadata["format"] == "tito"
    captured = {(tuple(x.prompt_token_ids), tuple(x.completion_token_ids)) for x in exchanges}
    assert all((tuple(r["input_ids"][: r["completion_mask"].index(1)]),
                tuple(r["input_ids"][r["completion_mask"].index(1):])) in captured for r in rows)
    drift = _checks(result)["tito_drift"]
    assert drift.metadata["exchanges_checked"] == len(exchanges)
    # a reply cut at max_tokens has no end-of-turn id, which the template's re-rendering adds: that is drift
    cut = {e.task_id for e in episodes for x in e.exchanges if x.finish_reason == "length"}
    assert all(any(task in d for d in drift.metadata["drifts"]) for task in cut)
    assert drift.passed == (drift.metadata["drifted_episodes"] == 0)
