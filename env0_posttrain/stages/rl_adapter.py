"""The RL stages of a run (no Dagster): GRPO after SFT, and the RL arm's eval through the same harness.

A run whose spec has no `rl` section materializes both as a recorded skip, so the report downstream
still runs (an asset that never materializes would hold eager automation back forever).
The RL training is stored in the training tables under the key `<run_id>:rl`, so `latest_training(run_id)`
keeps naming the SFT adapter.
"""

from __future__ import annotations

from typing import Any

from env0_posttrain.stages.context import CheckOutcome, StageContext, StageResult, load_tasks, not_applicable
from env0_posttrain.stages.eval_trajectories import evaluate_arm
from env0_posttrain.util.digests import file_digest


def rl_training_key(run_id: str) -> str:
    return f"{run_id}:rl"


def train_rl_adapter(ctx: StageContext) -> StageResult:
    from env0_posttrain.stages.base_model import base_student
    from env0_posttrain.train.grpo import train_rl

    rl = ctx.spec.rl
    if rl is None:
        return not_applicable("rl", "RL adapter", ("rl_adapter_trained",))
    sft = ctx.store.latest_training(ctx.run_id)
    if sft is None:
        raise RuntimeError(f"run {ctx.run_id}: no finished SFT training; materialize lora_adapter first")
    tasks = load_tasks(ctx, ("train",))
    base = base_student(ctx.spec, ctx.store, ctx.run_id, ctx.paths)
    key = rl_training_key(ctx.run_id)
    train_id = ctx.store.start_training(key)
    out_dir = ctx.artifacts("rl", train_id)

    def on_log(m: dict[str, Any]) -> None:
        ctx.store.log_training_metrics(train_id, key, int(m.get("step", 0)), m)

    try:
        steps, tokens = ctx.spec.eval_limits()  # the eval arms' budget: RL episodes are played as the evals play them
        eval_spec = ctx.spec.eval.model_copy(update={"max_steps": steps, "max_tokens": tokens})
        result = train_rl(tasks, rl, eval_spec, base, sft["adapter_path"], out_dir, ctx.run_id, on_log=on_log,
                          env=ctx.task_env(), base_ref=ctx.paths.rel(base), device=ctx.spec.student.device)
    except Exception as err:
        ctx.store.finish_training(train_id, "failed", None, None, {"error": repr(err)})
        raise
    revision = file_digest(result.adapter_dir / "adapter_model.safetensors")
    summary = result.model_dump(mode="json", exclude={"metrics"}) | {"sft_revision": sft["revision"]}
    ctx.store.finish_training(train_id, "finished", str(result.adapter_dir), revision, summary)
    changed = revision != sft["revision"] and result.steps > 0
    return StageResult(
        metadata={"train_id": train_id, "adapter_dir": result.adapter_dir, "revision": revision,
                  "sft_revision": sft["revision"], "steps": result.steps, "episodes": result.episodes,
                  "cut_episodes": result.cut_episodes, "first_reward": result.first_reward,
                  "final_reward": result.final_reward, "runtime_s": round(result.runtime_s, 1), "device": result.device,
                  **({"tensorboard": result.tensorboard_dir} if result.tensorboard_dir else {})},
        data_version=revision,
        checks=[CheckOutcome("rl_adapter_trained", changed,
                             f"{result.steps} GRPO steps; adapter {'differs from' if changed else 'equals'} the SFT one")],
    )


def evaluate_rl(ctx: StageContext, suites: list[str] | None = None) -> StageResult:
    if ctx.spec.rl is None:
        return not_applicable("rl", "RL arm to evaluate", ("no_unscored_rows",))
    return evaluate_arm(ctx, "rl", suites)
