"""The teacher_trajectories stage: teacher rollouts on the train split, exported as results.jsonl."""

from __future__ import annotations

from pathlib import Path

from env0_posttrain.stages.context import CheckOutcome, StageContext, StageResult, load_tasks
from env0_posttrain.stages import rounds
from env0_posttrain.stages.rounds import episodes_version, rollout_metadata, unscored_check


def export_results(ctx: StageContext, episodes: list, tasks: dict) -> tuple[Path, list]:
    """The teacher round as results.jsonl (benchflow/verifiers rows): the file SFT conversion reads."""
    from env0_posttrain.sft import results_row, write_results_jsonl

    path = ctx.artifacts("teacher") / "results.jsonl"
    rows = [results_row(e, tasks[e.task_id]) for e in episodes]
    write_results_jsonl(rows, path)
    return path, rows


def collect_teacher(ctx: StageContext) -> StageResult:
    from env0_posttrain.stages.arms import rollout_settings, teacher_endpoint
    from env0_posttrain.stages.base_model import base_student

    tasks = load_tasks(ctx, ("train",))
    spec = ctx.spec
    endpoint = teacher_endpoint(spec, lambda: base_student(spec, ctx.store, ctx.run_id, ctx.paths), ctx.run_id)
    round_id, episodes, summary = rounds.rollout(ctx, "teacher", tasks, spec.teacher.trials, endpoint,
                                           rollout_settings(spec, arm="teacher"))
    path, _ = export_results(ctx, episodes, {t.id: t for t in tasks})
    meta = rollout_metadata(round_id, episodes, summary) | {"results_jsonl": path, "teacher": spec.teacher.model}
    floor = spec.teacher.min_pass_rate
    return StageResult(
        metadata=meta,
        data_version=episodes_version(episodes),
        checks=[
            unscored_check(episodes),
            CheckOutcome("teacher_pass_rate_floor", meta["pass_rate"] >= floor,
                         f"teacher pass rate {meta['pass_rate']:.1%} vs floor {floor:.1%}"),
        ],
    )
