"""The eval stages: one arm (base, sft, teacher_eval, rl) on the eval split, K trials, the one harness."""

from __future__ import annotations

from typing import Any

from env0_posttrain.run.context import StageContext, StageResult, code_version, eval_splits, load_tasks
from env0_posttrain.run import rounds
from env0_posttrain.run.rounds import episodes_version, rollout_metadata, unscored_check


def evaluate_arm(ctx: StageContext, arm: str) -> StageResult:
    from env0_posttrain.run.base_eval_reuse import rollout_or_reuse
    from env0_posttrain.run.arms import arm_endpoint, base_student_identity, rollout_settings

    splits = eval_splits(ctx)
    tasks = load_tasks(ctx, splits)
    endpoint = arm_endpoint(ctx.spec, arm, ctx.store, ctx.run_id, ctx.paths, tasks)
    served: dict[str, Any] = {}
    if ctx.spec.hosting.kind == "openai_compatible" and arm in ("base", "sft"):  # listed name, then probe, first
        from env0_posttrain.evaluate.served import guard_served_arm

        served = guard_served_arm(ctx.spec, arm, endpoint, load_tasks(ctx, ("train",)))
    settings = rollout_settings(ctx.spec, arm)
    round_id, episodes, summary = rollout_or_reuse(
        ctx.store, ctx.run_id, arm, lambda: base_student_identity(ctx.spec, ctx.store, ctx.run_id, ctx.paths, endpoint),
        endpoint, settings, tasks, ctx.spec.eval.trials, code_version("agent", "workspace", "tasks"),
        lambda: rounds.rollout(ctx, arm, tasks, ctx.spec.eval.trials, endpoint, settings))
    meta = rollout_metadata(round_id, episodes, summary) | {"model": endpoint.model} | served
    if summary.get("reused_from"):
        src = summary["reused_from"]
        ctx.log.info(f"{arm}: reused round {src['round_id']} of run {src['run_id']} (same student, tasks, trials, "
                     "sampling and harness budget); no episode was run")
        meta |= {"reused_from_run": src["run_id"], "reused_from_round": src["round_id"]}
    ctx.store.record_eval_result(round_id, ctx.run_id, arm, endpoint.model, meta["episodes"], meta["strict_passes"], meta)
    return StageResult(metadata=meta, data_version=episodes_version(episodes), checks=[unscored_check(episodes)])
