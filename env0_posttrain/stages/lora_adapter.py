"""The lora_adapter stage: LoRA training on the stored SFT rows (run in its own process through Pipes)."""

from __future__ import annotations

import shutil
from pathlib import Path

from env0_posttrain.util import torch_threads
from env0_posttrain.util.paths import Paths
from env0_posttrain.util.digests import file_digest
from env0_posttrain.stages.context import CheckOutcome, StageContext, StageResult


def train_adapter(ctx: StageContext) -> StageResult:
    from env0_posttrain.stages.base_model import base_student
    from env0_posttrain.train import plot_training_curves, sanity_probe, train_lora
    from env0_posttrain.util.devices import device_label

    rows = ctx.store.load_sft_rows(ctx.run_id)
    if not rows:
        raise RuntimeError(f"run {ctx.run_id}: no SFT rows; materialize sft_rows first")
    base = base_student(ctx.spec, ctx.store, ctx.run_id, ctx.paths)
    train_id = ctx.store.start_training(ctx.run_id)
    out_dir = ctx.artifacts("adapter", train_id)

    def on_log(m: dict) -> None:
        ctx.store.log_training_metrics(train_id, ctx.run_id, int(m.get("step", 0)), m)

    tokenizer = None  # the base's own, unless the spec declares the student's tokenizer or chat template
    if ctx.spec.student.tokenizer or ctx.spec.student.chat_template:
        from env0_posttrain.stages.arms import load_student_tokenizer

        tokenizer = load_student_tokenizer(ctx.spec, ctx.store, ctx.run_id, ctx.paths)
    try:
        result = train_lora(rows, None, ctx.spec.lora, base, out_dir, on_log=on_log, tokenizer=tokenizer,
                            base_ref=ctx.paths.rel(base), device=ctx.spec.student.device)
    except Exception as err:
        ctx.store.finish_training(train_id, "failed", None, None, {"error": repr(err)})
        raise
    revision = file_digest(result.adapter_dir / "adapter_model.safetensors")
    probe = sanity_probe(base, result.adapter_dir, rows, n=8, device=result.device)  # where it trained
    plots = plot_training_curves(result.metrics, ctx.artifacts("adapter", "plots"))
    summary = result.model_dump(mode="json", exclude={"metrics"}) | {"device_label": device_label(result.device)}
    ctx.store.finish_training(train_id, "finished", str(result.adapter_dir), revision,
                              summary | {"probe": probe.model_dump(mode="json")})
    return StageResult(
        metadata={
            "train_id": train_id, "adapter_dir": result.adapter_dir, "revision": revision, "base": str(base),
            "steps": result.steps, "first_train_loss": result.first_train_loss, "final_train_loss": result.final_train_loss,
            "final_eval_loss": result.final_eval_loss, "best_step": result.best_step, "runtime_s": round(result.runtime_s, 1),
            "train_tokens": result.train_tokens, "trainable_params": result.trainable_params,
            "torch_threads": torch_threads.current().threads,
            "checkpointing": _checkpointing_note(result.memory_plan), "device": summary["device_label"],
            **({"tensorboard": result.tensorboard_dir} if result.tensorboard_dir else {}),  # tensorboard --logdir <it>
            **{f"plot_{p.stem}": p for p in plots},
        },
        data_version=revision,
        checks=[CheckOutcome("adapter_learned", probe.passed, probe.reason, probe.model_dump(mode="json"))],
    )


def _checkpointing_note(plan: dict | None) -> str:
    from env0_posttrain.train.gpu.memory_plan import MemoryPlan

    return MemoryPlan.model_validate(plan).describe() if plan else "none (CPU)"


PARTIAL = ".partial"  # adapter/.partial/<train_id>: what a killed training left, kept for a look, never read


def set_aside_partial_adapters(paths: Paths, run_id: str) -> list[Path]:
    """After the training process died: its `running` training is marked failed, and every adapter folder whose
    training did not finish is moved to adapter/.partial/, so nothing reads a half-written adapter as this run's.
    Returns where they went."""
    from env0_posttrain.store import Store

    folder = paths.artifacts(run_id) / "adapter"
    if not folder.is_dir() or not paths.db.is_file():
        return []
    store = Store(paths.db)
    store.running_trainings(run_id)  # a dead process's `running` training becomes failed
    statuses = store.training_statuses(run_id)
    moved = []
    for sub in sorted(folder.iterdir()):
        if sub.is_dir() and sub.name in statuses and statuses[sub.name] != "finished":
            target = folder / PARTIAL / sub.name
            target.parent.mkdir(exist_ok=True)
            if target.exists():
                shutil.rmtree(target)
            sub.rename(target)
            moved.append(target)
    return moved
