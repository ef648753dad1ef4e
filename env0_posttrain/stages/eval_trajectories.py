"""The eval stages: one arm (base, sft, teacher_eval, rl) on each eval suite, K trials, the one harness.

Each suite is its own round of the arm (stored as `arm@suite`; the tasks.n_eval split keeps the plain arm name),
so one suite can be played again alone (`suites`: the asset's config, the CLI's `--suite`) while the report reads
the newest finished round of every suite.
"""

from __future__ import annotations

from typing import Any

from env0_posttrain.stages.context import (
    StageContext, StageResult, code_version, content_hash, eval_splits, load_tasks,
)
from env0_posttrain.stages import rounds
from env0_posttrain.stages.rounds import episodes_version, rollout_metadata, unscored_check
from env0_posttrain.spec.suites import DEFAULT_SUITE, eval_suite_names, round_arm


def selected_suites(ctx: StageContext, suites: list[str] | None) -> list[str]:
    """The suites to play now: the named ones (each must be the spec's), else every suite."""
    known = eval_suite_names(ctx.spec)
    if not suites:
        return known
    unknown = [s for s in suites if s not in known]
    if unknown:
        raise ValueError(f"run {ctx.run_id}: no eval suite named {unknown}; the spec's suites: {known}")
    return [s for s in known if s in suites]


def suite_tasks(ctx: StageContext, suite: str) -> list:
    """The tasks of one suite: the eval (and heldout) split for the default suite, else the eval_suites asset's."""
    if suite == DEFAULT_SUITE:
        return load_tasks(ctx, eval_splits(ctx))
    from env0_posttrain.store.suites import suite_task_json
    from env0_posttrain.tasks.model import Task

    tasks = [Task.model_validate_json(j) for j in suite_task_json(ctx.store, ctx.run_id, suite)]
    if not tasks:
        raise RuntimeError(f"run {ctx.run_id}: suite {suite} has no tasks in the store; materialize eval_suites first")
    return tasks


def suite_trials(ctx: StageContext, suite: str) -> int:
    spec = next((s for s in ctx.spec.suites if s.name == suite), None)
    return (spec.trials if spec is not None else None) or ctx.spec.eval.trials


def evaluate_arm(ctx: StageContext, arm: str, suites: list[str] | None = None) -> StageResult:
    names = selected_suites(ctx, suites)
    results = {name: _evaluate_suite(ctx, arm, name) for name in names}
    if not ctx.spec.suites:  # no suites: exactly the one eval of before
        meta, episodes = results[DEFAULT_SUITE]
        return StageResult(metadata=meta, data_version=episodes_version(episodes), checks=[unscored_check(episodes)])
    meta: dict[str, Any] = {"suites_played": names}
    for name, (m, _) in results.items():
        meta |= {f"{name}.{k}": m[k] for k in ("round_id", "episodes", "strict_passes", "pass_rate", "unscored")}
        meta["model"] = m["model"]
    latest = {s: ctx.store.latest_round(ctx.run_id, round_arm(arm, s)) for s in eval_suite_names(ctx.spec)}
    checks = [unscored_check([e for _, eps in results.values() for e in eps])]
    return StageResult(metadata=meta, data_version=content_hash(latest), checks=checks)


def _evaluate_suite(ctx: StageContext, arm: str, suite: str) -> tuple[dict[str, Any], list]:
    from env0_posttrain.store.base_eval_reuse import rollout_or_reuse
    from env0_posttrain.stages.arms import arm_endpoint, base_student_identity, rollout_settings

    tasks = suite_tasks(ctx, suite)
    trials = suite_trials(ctx, suite)
    key = round_arm(arm, suite)
    endpoint = arm_endpoint(ctx.spec, arm, ctx.store, ctx.run_id, ctx.paths)
    served: dict[str, Any] = {}
    if ctx.spec.hosting.kind == "openai_compatible" and arm in ("base", "sft"):  # listed name, then probe, first
        from env0_posttrain.evaluate.served import guard_served_arm

        served = guard_served_arm(ctx.spec, arm, endpoint, load_tasks(ctx, ("train",)))
    settings = rollout_settings(ctx.spec, arm)
    round_id, episodes, summary = rollout_or_reuse(
        ctx.store, ctx.run_id, key, lambda: base_student_identity(ctx.spec, ctx.store, ctx.run_id, ctx.paths, endpoint),
        endpoint, settings, tasks, trials, code_version("agent", "workspace", "tasks"),
        lambda: rounds.rollout(ctx, arm, tasks, trials, endpoint, settings, **({"round_arm": key} if key != arm else {})))
    meta = rollout_metadata(round_id, episodes, summary) | {"model": endpoint.model} | served
    if endpoint.model.startswith("env0-local/"):  # the in-process student: where it ran (the report's lineage)
        from env0_posttrain.util.devices import device_label
        from env0_posttrain.stages.arms import student_device

        meta["device"] = device_label(student_device(ctx.spec))
    if summary.get("reused_from"):
        src = summary["reused_from"]
        ctx.log.info(f"{key}: reused round {src['round_id']} of run {src['run_id']} (same student, tasks, trials, "
                     "sampling and harness budget); no episode was run")
        meta |= {"reused_from_run": src["run_id"], "reused_from_round": src["round_id"]}
    ctx.store.record_eval_result(round_id, ctx.run_id, key, endpoint.model, meta["episodes"], meta["strict_passes"], meta)
    return meta, episodes


