"""The on-policy distillation stages of a run (no Dagster): rounds after SFT, and the `onpolicy` arm's eval.

Each round the student (the SFT adapter before round 1, then the previous round's) plays training tasks through
the eval harness; then its kind's round step turns those episodes into training (relabel: the teacher's message at
each of the student's states, rows of earlier rounds kept, as DAgger does; reverse_kl: a same-tokenizer teacher's
log-probabilities of the tokens the student sampled, and the per-token reverse KL to it). The training is stored under
`<run_id>:onpolicy`, so `latest_training(run_id)` keeps naming the SFT adapter; a run whose spec has no `onpolicy`
section materializes both stages as a recorded skip (as the RL stages do).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from env0_posttrain.stages.context import CheckOutcome, StageContext, StageResult, load_tasks, not_applicable
from env0_posttrain.stages.eval_trajectories import evaluate_arm
from env0_posttrain.util.digests import file_digest

ARM = "onpolicy"


def onpolicy_training_key(run_id: str) -> str:
    return f"{run_id}:onpolicy"


@dataclass
class RoundInputs:
    """What a kind's round step gets: the round's own episodes and everything to train the next adapter."""

    round: int
    episodes: list
    tasks: dict[str, Any]
    adapter: Path  # the adapter that played the round
    out_dir: Path
    step_offset: int  # optimizer steps of the earlier rounds (the stored curve is one line over the rounds)
    state: dict[str, Any] = field(default_factory=dict)  # kept between rounds by the kind (relabel: the rows so far)


@dataclass
class RoundOutcome:
    adapter: Path
    steps: int
    metrics: dict[str, Any]


def round_tasks(train: list, n: int | None, seed: int, round_no: int) -> list:
    """The round's training tasks: all of them, or a seeded draw of `n` (a new draw each round)."""
    ordered = sorted(train, key=lambda t: t.id)
    if n is None or n >= len(ordered):
        return ordered
    return sorted(random.Random(seed * 100_003 + round_no).sample(ordered, n), key=lambda t: t.id)


def _relabel_step(ctx: StageContext, inputs: RoundInputs, base: Path, tokenizer: Any,
                  on_log: Callable[[dict[str, Any]], None]) -> RoundOutcome:
    """relabel: the teacher's next message at every assistant turn of the round's episodes, then SFT on every row
    gathered so far (the SFT rows too, if asked), continuing the adapter that played."""
    from env0_posttrain.agent import AgentSettings
    from env0_posttrain.stages.arms import teacher_endpoint
    from env0_posttrain.train.onpolicy_relabel import relabel_rows, sft_token_rows, train_relabel_round

    op = ctx.spec.onpolicy
    spec = ctx.spec
    if op.teacher_model:
        spec = spec.model_copy(update={"teacher": spec.teacher.model_copy(update={"model": op.teacher_model})})
    endpoint = teacher_endpoint(spec, run_id=ctx.run_id)
    settings = AgentSettings.for_teacher(spec.teacher, max_steps=spec.teacher_limits()[0], shell=spec.shell,
                                         scale=spec.scale)
    rows, items, stats = relabel_rows(inputs.episodes, inputs.tasks, endpoint, settings, ctx.run_id, tokenizer,
                                      op.teacher_concurrency or spec.teacher.concurrency,
                                      drop_agreeing=op.agreeing_turns == "drop", env_paths=ctx.task_paths,
                                      entity_swaps=op.entity_swaps, swap_seed=op.seed + inputs.round,
                                      entity_weight=op.entity_weight)
    _write_jsonl(inputs.out_dir / "relabelled.jsonl", [
        {"task_id": i.task_id, "trial": i.trial, "turn": i.turn, "student": i.student, "teacher": i.teacher,
         "agrees": i.agrees, "error": i.error} for i in items])
    gathered = inputs.state.setdefault("rows", [])
    gathered.extend(rows)
    train_rows = list(gathered)
    if op.keep_sft_rows:
        if "sft_rows" not in inputs.state:
            inputs.state["sft_rows"] = sft_token_rows(ctx.store.load_sft_rows(ctx.run_id), tokenizer)
        train_rows += inputs.state["sft_rows"]
    metrics = {"teacher_agreement": stats.agreement, "teacher_errors": stats.teacher_errors, "turns": stats.turns,
               "rows_new": stats.rows, "rows_swapped_new": stats.rows_swapped, "entity_tokens_new": stats.entity_tokens,
               "rows_trained": len(train_rows), "rows_not_rendered": stats.rows_not_rendered,
               "teacher_tokens_new": stats.completion_tokens,
               "teacher_error_kinds": dict(stats.errors)}
    if not train_rows:
        return RoundOutcome(inputs.adapter, 0, metrics | {"tokens_trained": 0})
    lora = ctx.spec.lora.model_copy(update={
        "learning_rate": op.learning_rate, "max_steps": op.steps_per_round, "epochs": None, "eval_fraction": 0.0,
        "checkpoint_choice": "eval_loss", "save_steps": op.steps_per_round, "logging_steps": op.logging_steps,
        "report_to": list(op.report_to), "seed": op.seed + inputs.round,
        "per_device_batch_size": op.per_device_batch_size or ctx.spec.lora.per_device_batch_size})
    result = train_relabel_round(train_rows, lora, base, inputs.adapter, inputs.out_dir / "train", tokenizer,
                                 on_log=on_log, base_ref=ctx.paths.rel(base), device=ctx.spec.student.device)
    return RoundOutcome(result.adapter_dir, result.steps, metrics | {
        "tokens_trained": result.train_tokens, "first_loss": result.first_train_loss,
        "final_loss": result.final_train_loss, "train_s": round(result.runtime_s, 1), "device": result.device})


def _reverse_kl_setup(ctx: StageContext, base: Path, tokenizer: Any) -> dict[str, Any]:
    """reverse_kl, before any round plays: the teacher its spec names (offline: the tiny teacher built from the run's
    teacher SFT rows, cached beside the tiny students), refused (`TeacherMismatch`, naming both) unless it reads the
    student's token ids and chat template exactly as the student does."""
    from env0_posttrain.stages.arms import student_device
    from env0_posttrain.train.reverse_kl import check_teacher_compatible, teacher_from_spec

    op = ctx.spec.onpolicy
    rows = ctx.store.load_sft_rows(ctx.run_id) if op.teacher == "tiny" else None
    if op.teacher == "tiny" and not rows:
        raise RuntimeError(f"run {ctx.run_id}: onpolicy.teacher is tiny, built from the teacher's SFT rows, and the "
                           "run has none; materialize sft_dataset first")
    teacher = teacher_from_spec(op, student_dir=base, cache_dir=ctx.paths.models, teacher_rows=rows,
                                device=student_device(ctx.spec))
    check_teacher_compatible(tokenizer, teacher.tokenizer, ctx.spec.student.model, teacher.name)
    return {"teacher": teacher}


def _reverse_kl_step(ctx: StageContext, inputs: RoundInputs, base: Path, tokenizer: Any,
                     on_log: Callable[[dict[str, Any]], None]) -> RoundOutcome:
    """reverse_kl: the teacher scores the tokens the student sampled in the round's episodes (played at temperature
    1, which the spec enforces), then `steps_per_round` steps of the sampled-token reverse KL (plus the verifier's
    reward, if weighted), continuing the adapter that played."""
    from env0_posttrain.stages.arms import student_device
    from env0_posttrain.train.reverse_kl import train_reverse_kl

    op = ctx.spec.onpolicy
    settings = op.model_copy(update={"seed": op.seed + inputs.round})  # steps: the spec mirrors steps_per_round
    try:
        result = train_reverse_kl(base, inputs.adapter, inputs.episodes, inputs.state["teacher"], settings,
                                  inputs.out_dir / "train", run_id=ctx.run_id, base_ref=ctx.paths.rel(base),
                                  device=student_device(ctx.spec), on_log=on_log)
    except ValueError as err:  # no episode could train (no sampled tokens, or the teacher failed on every one)
        raise RuntimeError(f"run {ctx.run_id}: onpolicy round {inputs.round}: {err}") from err
    return RoundOutcome(result.adapter_dir, result.steps, {
        "reverse_kl_before": result.initial_reverse_kl, "reverse_kl_after": result.final_reverse_kl,
        "tokens_scored": result.tokens_scored, "tokens_trained": result.tokens_scored,
        "teacher_errors": sum(result.teacher_errors.values()), "teacher_error_kinds": dict(result.teacher_errors),
        "episodes_trained": result.episodes_trained, "empty_episodes": result.empty_episodes,
        "cut_episodes": result.cut_episodes, "train_s": round(result.runtime_s, 1), "device": result.device})


# The step after a round's play, one per kind: the teacher's signal on the round's episodes, then training.
ROUND_STEPS: dict[str, Callable[..., RoundOutcome]] = {"relabel": _relabel_step, "reverse_kl": _reverse_kl_step}
# What a kind prepares once, before any round plays (its entries start the rounds' shared `state`).
ROUND_SETUPS: dict[str, Callable[[StageContext, Path, Any], dict[str, Any]]] = {"reverse_kl": _reverse_kl_setup}


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows))


def draw_fresh_tasks(ctx: StageContext, n: int, train: list) -> list:
    """`onpolicy.fresh_tasks` new tasks of the run's training templates, none of the run's stored tasks (`train`, as
    the stage loaded it, and the eval and held-out splits)."""
    if not n:
        return []
    from env0_posttrain.tasks import fresh_train_tasks

    t0 = time.perf_counter()
    others = load_tasks(ctx, ("eval", "heldout"), required=False)  # a spec may have neither (suites evaluate)
    fresh = fresh_train_tasks(ctx.spec.tasks, n, [*train, *others])
    ctx.log.info("onpolicy: %d fresh tasks of the training templates drawn in %.1f s", len(fresh),
                 time.perf_counter() - t0)
    return fresh


def play_round(ctx: StageContext, tasks: list, adapter: Path, base: Path, round_no: int) -> list:
    """The student with `adapter` on `tasks` through the eval harness (the eval arms' settings and decoding)."""
    import torch

    from env0_posttrain.agent import ModelEndpoint, register_local_model
    from env0_posttrain.agent.providers.local_model import unregister_local_model
    from env0_posttrain.agent.rollouts import run_rollouts_sync
    from env0_posttrain.stages.arms import CPU_BATCH, CUDA_BATCH, rollout_settings, student_device

    op = ctx.spec.onpolicy
    device = student_device(ctx.spec)
    model_id = register_local_model(f"{ctx.run_id}-onpolicy-round{round_no}", base, adapter_path=adapter,
                                    device=device, max_batch_size=CUDA_BATCH if device == "cuda" else CPU_BATCH,
                                    repetition_window=ctx.spec.eval.repetition_window)
    temperature = ctx.spec.eval.temperature if op.temperature is None else op.temperature
    endpoint = ModelEndpoint(model=model_id, temperature=temperature, max_tokens=ctx.spec.eval_limits()[1])
    settings = rollout_settings(ctx.spec, ARM)
    if op.max_steps_per_episode:
        settings = settings.model_copy(update={"max_steps": op.max_steps_per_episode})
    torch.manual_seed(op.seed * 100_003 + round_no)  # sampled rounds differ by round and seed only
    episodes: list = []
    try:
        run_rollouts_sync(tasks, ARM, op.trials_per_round, endpoint, settings, ctx.run_id, on_episode=episodes.append,
                          env=ctx.task_env(), progress=False)
    finally:
        unregister_local_model(model_id)  # the next round plays a new adapter: free this one
    return sorted(episodes, key=lambda e: (e.task_id, e.trial))


def _tensorboard_scalars(log_dir: Path, round_no: int, metrics: dict[str, Any]) -> None:
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(log_dir)) as writer:
        for k, v in metrics.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v is not None:
                writer.add_scalar(f"onpolicy/{k}", v, round_no)


def train_onpolicy_adapter(ctx: StageContext) -> StageResult:
    from env0_posttrain.stages.arms import load_student_tokenizer
    from env0_posttrain.stages.base_model import base_student

    op = ctx.spec.onpolicy
    if op is None:
        return not_applicable("onpolicy", "on-policy adapter", ("onpolicy_adapter_trained",))
    if op.kind not in ROUND_STEPS:
        raise RuntimeError(f"run {ctx.run_id}: onpolicy.kind {op.kind!r} has no round step in this build")
    sft = ctx.store.latest_training(ctx.run_id)
    if sft is None:
        raise RuntimeError(f"run {ctx.run_id}: no finished SFT training; materialize lora_adapter first")
    train = load_tasks(ctx, ("train",))
    fresh = draw_fresh_tasks(ctx, op.fresh_tasks, train)
    train += fresh
    by_id = {t.id: t for t in train}
    base = base_student(ctx.spec, ctx.store, ctx.run_id, ctx.paths)
    tokenizer = load_student_tokenizer(ctx.spec, ctx.store, ctx.run_id, ctx.paths)
    setup = ROUND_SETUPS.get(op.kind)
    state = setup(ctx, base, tokenizer) if setup else {}  # e.g. reverse_kl's teacher, refused before anything runs
    key = onpolicy_training_key(ctx.run_id)
    train_id = ctx.store.start_training(key)
    out_dir = ctx.artifacts("onpolicy", train_id)
    adapter, steps, rounds = Path(sft["adapter_path"]), 0, []
    if fresh:
        _write_jsonl(out_dir / "fresh_tasks.jsonl", [t.model_dump(mode="json") for t in fresh])
    t0 = time.perf_counter()

    def on_log(m: dict[str, Any]) -> None:
        row = dict(m) | {"step": steps + int(m.get("step", 0))}
        ctx.store.log_training_metrics(train_id, key, row["step"], row)

    try:
        for k in range(1, op.rounds + 1):
            t_round = time.perf_counter()
            tasks = round_tasks(train, op.tasks_per_round, op.seed, k)
            episodes = play_round(ctx, tasks, adapter, base, k)
            play_s = time.perf_counter() - t_round
            inputs = RoundInputs(k, episodes, by_id, adapter, out_dir / f"round-{k}", steps, state)
            outcome = ROUND_STEPS[op.kind](ctx, inputs, base, tokenizer, on_log)
            # a missing or unscored verdict is a fail (Episode.passed needs a verifier's reward of 1)
            metrics = {"round": k, "episodes": len(episodes), "pass_rate": sum(e.passed for e in episodes) / max(
                len(episodes), 1), "play_s": round(play_s, 1), "steps": outcome.steps} | outcome.metrics
            rounds.append(metrics)
            ctx.log.info("onpolicy round %d/%d: %d episodes, pass %.3f, agreement %s, %s rows trained, %d steps",
                         k, op.rounds, len(episodes), metrics["pass_rate"], metrics.get("teacher_agreement"),
                         metrics.get("rows_trained"), outcome.steps)
            if "tensorboard" in op.report_to:
                _tensorboard_scalars(out_dir / "tensorboard" / "rounds", k, metrics)
            adapter, steps = outcome.adapter, steps + outcome.steps
    except Exception as err:
        ctx.store.finish_training(train_id, "failed", None, None, {"error": repr(err), "rounds": rounds})
        raise
    _write_jsonl(out_dir / "rounds.jsonl", rounds)
    revision = file_digest(adapter / "adapter_model.safetensors")
    summary = {"kind": op.kind, "rounds": rounds, "steps": steps, "sft_revision": sft["revision"], "fresh_tasks": len(fresh),
               "runtime_s": round(time.perf_counter() - t0, 1)}
    ctx.store.finish_training(train_id, "finished", str(adapter), revision, summary)
    changed = revision != sft["revision"] and steps > 0
    last = rounds[-1] if rounds else {}
    return StageResult(
        metadata={"train_id": train_id, "adapter_dir": adapter, "revision": revision, "kind": op.kind,
                  "sft_revision": sft["revision"], "rounds": len(rounds), "steps": steps,
                  "first_round_pass_rate": rounds[0]["pass_rate"] if rounds else None,
                  "last_round_pass_rate": last.get("pass_rate"),
                  "first_round_agreement": rounds[0].get("teacher_agreement") if rounds else None,
                  "last_round_agreement": last.get("teacher_agreement"),
                  "rows_trained": last.get("rows_trained"), "fresh_tasks": len(fresh), "teacher_errors": sum(r.get("teacher_errors", 0) for r in rounds),
                  "runtime_s": summary["runtime_s"], "rounds_jsonl": out_dir / "rounds.jsonl",
                  **({"tensorboard": out_dir} if "tensorboard" in op.report_to else {})},
        data_version=revision,
        checks=[CheckOutcome("onpolicy_adapter_trained", changed,
                             f"{len(rounds)} rounds, {steps} steps; adapter "
                             f"{'differs from' if changed else 'equals'} the SFT one")],
    )


def evaluate_onpolicy(ctx: StageContext, suites: list[str] | None = None) -> StageResult:
    if ctx.spec.onpolicy is None:
        return not_applicable("onpolicy", "on-policy arm to evaluate", ("no_unscored_rows",))
    return evaluate_arm(ctx, ARM, suites)
