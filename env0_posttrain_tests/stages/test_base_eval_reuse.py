"""Teacher backfills reuse the base eval: same student, tasks, trials, sampling and budget -> one base eval."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from env0_posttrain.stages import arms as models
from env0_posttrain.stages.comparison_report import write_report
from env0_posttrain.stages import rounds
from env0_posttrain.agent import oracle_endpoint
from env0_posttrain.making.new_run import clone_for_teacher
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, parse_spec
from env0_posttrain.stages.context import StageContext
from env0_posttrain.stages.eval_trajectories import evaluate_arm
from env0_posttrain.stages.task_set import build_task_set
from env0_posttrain.store import Store

SOURCE = {"run_id": "src", "tasks": {"families": ["calendar"], "n_train": 2, "n_eval": 3, "seed": 3},
          "eval": {"trials": 2, "max_steps": 6, "concurrency": 4}}


@pytest.fixture
def env(tmp_path: Path, monkeypatch):
    """Stages on a temporary store; the base student is played by the offline oracle (its weights named
    by a fixed identity), so no student is built and every episode is real."""
    runs: list[str] = []
    real_rollout = rounds.rollout

    def counting_rollout(ctx, arm, *a, **kw):
        runs.append(f"{ctx.run_id}:{arm}")
        return real_rollout(ctx, arm, *a, **kw)

    def endpoint(spec, arm, store, run_id, paths):
        return oracle_endpoint(skill=0.7, seed=1).model_copy(update={"temperature": spec.eval.temperature,
                                                                     "max_tokens": spec.eval.max_tokens})

    monkeypatch.setattr(rounds, "rollout", counting_rollout)
    monkeypatch.setattr(models, "arm_endpoint", endpoint)
    monkeypatch.setattr(models, "base_student_identity", lambda *a: "student-weights-v1")
    paths = Paths(tmp_path)
    store = Store(paths.db)

    def ctx(spec: RunSpec) -> StageContext:
        store.upsert_run(spec)
        c = StageContext(spec.run_id, spec, store, paths, logging.getLogger("test"))
        build_task_set(c)
        return c

    return ctx, runs, store


def test_n_teacher_clones_cost_one_base_eval(env):
    ctx, runs, store = env
    source = parse_spec(SOURCE)
    first = evaluate_arm(ctx(source), "base")
    assert runs == ["src:base"] and "reused_from_run" not in first.metadata

    for teacher in ("openai/gpt-x", "fireworks_ai/qwen"):
        clone = clone_for_teacher(source, teacher)
        res = evaluate_arm(ctx(clone), "base")
        assert res.metadata["reused_from_run"] == "src"
        assert res.metadata["reused_from_round"] == first.metadata["round_id"]
        assert res.metadata["episodes"] == first.metadata["episodes"] == 6
        assert res.metadata["strict_passes"] == first.metadata["strict_passes"]
        assert res.data_version == first.data_version  # the same episodes
        eps = store.load_episodes(res.metadata["round_id"])
        assert {e.run_id for e in eps} == {clone.run_id}
        assert store.latest_round(clone.run_id, "base") == res.metadata["round_id"]
    assert runs == ["src:base"], "the clones ran no base episode"

    c = ctx(clone)
    evaluate_arm(c, "sft")
    report = write_report(c)  # the report says where its base arm came from
    assert f"run src (round {first.metadata['round_id']})" in report.metadata["report_md"].read_text()

    evaluate_arm(ctx(source), "base")  # the same run asking again (a nightly eval) runs it again
    assert runs == ["src:base", f"{clone.run_id}:sft", "src:base"]


@pytest.mark.parametrize("change", [{"eval": {"trials": 1}}, {"eval": {"max_steps": 5}},
                                    {"eval": {"temperature": 0.5}}, {"tasks": {"seed": 4}}])
def test_a_different_student_setting_or_task_set_runs_its_own_base_eval(env, change):
    ctx, runs, _ = env
    evaluate_arm(ctx(parse_spec(SOURCE)), "base")
    data = {**SOURCE, "run_id": "other"}
    for section, values in change.items():
        data[section] = {**data[section], **values}
    res = evaluate_arm(ctx(parse_spec(data)), "base")
    assert "reused_from_run" not in res.metadata and runs == ["src:base", "other:base"]


def test_only_the_base_arm_is_reused(env):
    ctx, runs, _ = env
    source = parse_spec(SOURCE)
    evaluate_arm(ctx(source), "teacher_eval")
    evaluate_arm(ctx(clone_for_teacher(source, "openai/gpt-x")), "teacher_eval")
    assert runs == ["src:teacher_eval", "src--openai-gpt-x:teacher_eval"]
