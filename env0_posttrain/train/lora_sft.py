"""LoRA SFT with TRL's SFTTrainer and a PEFT LoraConfig, every knob taken from `runspec.LoraSpec`.

The same code trains Qwen3.5-9B on an H100 (bf16, kernels checked before step 1 by `gpu_kernels`,
Liger, checkpointing chosen by `memory_plan` for the memory budget, padding-free batches where the
attention supports them) and the tiny offline student on a CPU (fp32, no checkpointing).
Loss is on assistant tokens only: TRL swaps in the template's training twin with generation
markers. Checkpoints go under `out_dir/checkpoints`; a rerun resumes from the last one.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.spec.runspec import LoraSpec
from env0_posttrain.train.gpu.kernels import KernelChoice, check_kernels, probe_kernels, uses_linear_attention
from env0_posttrain.train.gpu.memory_plan import (
    MemoryPlan,
    ModelShape,
    checkpointing_settings,
    device_memory_gib,
    memory_budget_gib,
    plan_memory,
)
from env0_posttrain.train.checkpoint_choice import CheckpointChoice, checkpoint_step, first_call_scores, pick_best
from env0_posttrain.train.tracking.metrics import MetricsCallback
from env0_posttrain.train.gpu.patch_scope import kernel_patches_undone
from env0_posttrain.train.rows import rows_to_dataset
from env0_posttrain.train.tracking.trackers import TENSORBOARD_DIRNAME, report_to_list, route_tensorboard
from env0_posttrain.util.fsutil import replace_dir
from env0_posttrain.train.model_card import CardInfo, finish_adapter_dir

log = logging.getLogger(__name__)
ADAPTER_DIRNAME = "adapter"
CHECKPOINTS_DIRNAME = "checkpoints"


class TrainResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    adapter_dir: Path
    base_path: str
    steps: int
    best_step: int | None = Field(description="step of the checkpoint with the lowest eval loss")
    best_eval_loss: float | None
    final_eval_loss: float | None
    first_train_loss: float | None
    final_train_loss: float | None
    runtime_s: float
    train_tokens: int
    n_train_rows: int
    n_eval_rows: int
    resumed_from: str | None = None
    device: str
    trainable_params: int
    kernels: dict[str, Any] | None = Field(default=None, description="the kernels used (gpu_kernels.KernelChoice)")
    memory_plan: dict[str, Any] | None = Field(default=None, description="the checkpointing chosen on CUDA and why")
    metrics: list[dict[str, Any]] = Field(default_factory=list)
    checkpoint: CheckpointChoice | None = Field(default=None, description="which checkpoint became the adapter, and why")
    tensorboard_dir: Path | None = Field(default=None, description="TensorBoard's event files (lora.report_to)")


def last_checkpoint(checkpoints_dir: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    if not checkpoints_dir.is_dir():
        return None
    found = get_last_checkpoint(str(checkpoints_dir))
    return Path(found) if found else None


def resolve_device_settings(lora: LoraSpec, kernels: KernelChoice | None = None, device: str | None = None) -> dict[str, Any]:
    """CPU: fp32, no checkpointing, padding-free where the rows can be kept apart. GPU: bf16, the checked kernels,
    and checkpointing as the spec says (None: decided by `apply_memory_plan` once the model is loaded; every layer
    until then). `device`: the run's `student.device`, resolved ('cuda' / 'cpu'); None = CUDA when present."""
    import torch

    cuda = torch.cuda.is_available() if device is None else device.startswith("cuda")
    if kernels is None:
        kernels = check_kernels(lora, probe_kernels(cuda), linear_attention=False)
    bf16 = cuda and torch.cuda.is_bf16_supported() if lora.bf16 is None else lora.bf16
    checkpointing = cuda if lora.gradient_checkpointing is None else lora.gradient_checkpointing
    if not cuda:
        bf16, checkpointing = False, False
    return {
        "use_cpu": not cuda,
        "bf16": bool(bf16),
        "gradient_checkpointing": bool(checkpointing),
        "gradient_checkpointing_kwargs": {"use_reentrant": False} if checkpointing else None,
        "checkpoint_layers": None,  # a memory plan's partial checkpointing: these layers only (LayerCheckpointing)
        "padding_free": padding_free_supported(lora, kernels),
        # flash-attention's varlen kernel whenever rows are concatenated (padding-free or packed) and it is there.
        "attn_implementation": "flash_attention_2" if cuda and kernels.flash_attn and (
            lora.packing or padding_free_supported(lora, kernels)) else None,
        "use_liger_kernel": bool(cuda and kernels.use_liger),
    }


# CPU padding-free keeps the rows apart with one dense block mask of (batch x max_seq_length)^2 booleans
# (transformers' sdpa path, from the restarting position ids): allowed up to 8192 tokens per batch, a 64 MiB mask.
CPU_PADDING_FREE_MAX_TOKENS = 8192


def padding_free_supported(lora: LoraSpec, kernels: KernelChoice) -> bool:
    """TRL's padding-free batches (rows concatenated, positions restarting per row, no pad tokens) when they save
    something (batch > 1) and every layer can keep the rows apart. CUDA: flash-attention's varlen kernel for the
    attention layers (sdpa's dense block mask grows with the square of the batch's tokens) and, in Gated DeltaNet
    layers, fla and causal-conv1d. CPU: transformers' sdpa block mask, small at CPU batch sizes, where the linear
    layers dominate and stop computing on pad tokens: same losses, 7-23 % less time per step on the demo's rows
    (41 % padding; bench/lora_cpu_bench.py, quiet 2 cores). Gated DeltaNet's torch path cannot keep rows apart,
    so not there. Packing (`lora.packing`) is TRL's other path and implies padding-free."""
    if lora.packing or lora.per_device_batch_size < 2:
        return False
    if not kernels.cuda:
        return not kernels.linear_attention and (
            lora.per_device_batch_size * lora.max_seq_length <= CPU_PADDING_FREE_MAX_TOKENS)
    return kernels.flash_attn and kernels.keeps_rows_apart


def apply_memory_plan(lora: LoraSpec, device: dict[str, Any], model, kernels: KernelChoice) -> MemoryPlan | None:
    """On CUDA, choose the checkpointing for `lora.gpu_memory_gb` (default: the device's) and put it in `device`:
    which layers are checkpointed and whether their inputs are offloaded (gpu/memory_plan.py)."""
    if device["use_cpu"]:
        return None
    shape = ModelShape.of(model, lora.per_device_batch_size * lora.max_seq_length, 2 if device["bf16"] else 4,
                          kernels.memory_kind)
    budget = memory_budget_gib(lora.gpu_memory_gb, device_memory_gib())
    plan = plan_memory(shape, budget, forced=lora.gradient_checkpointing)
    device.update(checkpointing_settings(plan))
    return plan


def episode_of(row: dict, index: int) -> str:
    """The episode a row was cut from (its source's episode_key); a row without a source stands alone."""
    source = row.get("source")
    if isinstance(source, str):
        try:
            source = json.loads(source)
        except json.JSONDecodeError:
            source = None
    key = source.get("episode_key") if isinstance(source, dict) else None
    return str(key) if key else f"row-{index}"


def split_eval(train_rows: Sequence[dict], eval_rows: Sequence[dict] | None, lora: LoraSpec) -> tuple[list, list]:
    """Use the given eval rows; else hold out `eval_fraction` of the episodes (rounded; at least one stays in
    training), drawn by datasets' `Dataset.train_test_split` with seed `lora.seed` over the sorted episode keys.

    Whole episodes are held out: upweighted copies and windows of one episode all land on one side,
    so the eval loss is never measured on a row the adapter trained on.
    """
    train_rows = list(train_rows)
    if eval_rows:
        return train_rows, list(eval_rows)
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(train_rows):
        groups.setdefault(episode_of(row, i), []).append(i)
    n_held = min(round(len(groups) * lora.eval_fraction), len(groups) - 1)
    if n_held <= 0:
        return train_rows, []
    from datasets import Dataset

    split = Dataset.from_dict({"episode": sorted(groups)}).train_test_split(test_size=n_held, seed=lora.seed)
    held = sorted(i for key in split["test"]["episode"] for i in groups[key])
    kept = set(held)
    return [r for i, r in enumerate(train_rows) if i not in kept], [train_rows[i] for i in held]


def build_sft_config(lora: LoraSpec, out_dir: Path, has_eval: bool, device: dict[str, Any], token_rows: bool = False):
    """`token_rows`: TITO rows whose labels already mask the prompt, so no template masking is needed."""
    from trl import SFTConfig

    eval_every = lora.save_steps
    by_loss = has_eval and lora.checkpoint_choice == "eval_loss"  # first_call: every checkpoint is kept and scored
    return SFTConfig(
        output_dir=str(out_dir / CHECKPOINTS_DIRNAME),
        max_steps=-1 if lora.epochs else lora.max_steps,
        num_train_epochs=lora.epochs or 1.0,
        per_device_train_batch_size=lora.per_device_batch_size,
        per_device_eval_batch_size=max(lora.per_device_batch_size, 8),
        gradient_accumulation_steps=lora.grad_accumulation,
        learning_rate=lora.learning_rate,
        warmup_steps=lora.warmup_ratio,
        lr_scheduler_type="cosine",
        max_length=None if device["padding_free"] else lora.max_seq_length,
        packing=lora.packing,
        train_sampling_strategy="group_by_length" if lora.group_by_length and not device["padding_free"] else "random",
        padding_free=device["padding_free"],
        assistant_only_loss=not token_rows,
        logging_steps=lora.logging_steps,
        save_strategy="steps",
        save_steps=lora.save_steps,
        save_total_limit=3 if lora.checkpoint_choice == "eval_loss" else None,
        eval_strategy="steps" if has_eval else "no",
        eval_steps=eval_every if has_eval else None,
        load_best_model_at_end=by_loss,
        metric_for_best_model="eval_loss" if has_eval else None,
        greater_is_better=False if has_eval else None,
        include_num_input_tokens_seen="non_padding",
        seed=lora.seed,
        data_seed=lora.seed,
        report_to=report_to_list(lora.report_to),
        disable_tqdm=True,
        dataloader_num_workers=0,
        dataset_num_proc=None,
        activation_checkpointing=device["gradient_checkpointing"],
        activation_checkpointing_kwargs=device["gradient_checkpointing_kwargs"],
        **{k: device[k] for k in ("use_cpu", "bf16", "use_liger_kernel")},
    )


def build_lora_config(lora: LoraSpec):
    from peft import LoraConfig

    return LoraConfig(
        r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout, target_modules=list(lora.target_modules),
        bias="none", task_type="CAUSAL_LM", modules_to_save=list(lora.modules_to_save) or None,
    )


def _truncate_to_max_length(dataset, tokenizer, lora: LoraSpec, device: dict[str, Any]):
    """Padding-free batches do not enforce max_length: drop rows that would overflow instead of cutting them."""
    if not device["padding_free"]:
        return dataset
    if "input_ids" in dataset.column_names:
        return dataset.filter(lambda r: len(r["input_ids"]) <= lora.max_seq_length)
    def fits(r):
        ids = tokenizer.apply_chat_template(r["messages"], tools=r["tools"], tokenize=True)
        return len(ids["input_ids"] if isinstance(ids, dict) else ids) <= lora.max_seq_length
    return dataset.filter(fits)


CARD_HYPERPARAMETERS = {"r", "alpha", "dropout", "learning_rate", "max_seq_length", "max_steps", "epochs", "warmup_ratio"}


def train_lora(
    train_rows: Sequence[dict[str, Any]],
    eval_rows: Sequence[dict[str, Any]] | None,
    lora: LoraSpec,
    base_path: str | Path,
    out_dir: Path,
    on_log: Callable[[dict[str, Any]], None] | None = None,
    resume: bool = True,
    tokenizer: Any = None,
    base_ref: str | None = None,
    device: str | None = None,
    init_adapter: str | Path | None = None,
) -> TrainResult:
    """Train a LoRA adapter on TRL rows; returns where it is and how training went.

    `tokenizer` is the student's (run spec `student.tokenizer` / `student.chat_template`): the one that
    rendered the rows' lengths and the drift check; None loads the base's own. `base_ref` is how the
    adapter's config and card name the base (default: `base_path` as given); the pipeline passes the
    base's path relative to the data dir, so the data dir can move (model_card.py). `device`: the run's
    `student.device` ('auto', 'cpu', 'cuda'; None = 'auto'): training and the first-call scoring run there.
    `init_adapter`: an adapter folder to go on training (the on-policy stage continues the SFT adapter) instead
    of a fresh one from `lora`'s rank and targets.

    The kernels the trainer patches in (Liger) stay with this model: transformers' modules are put back when
    training ends (gpu/patch_scope.py), so a model loaded later in this process runs plain torch."""
    import torch
    from peft import PeftModel, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, set_seed
    from trl import SFTTrainer

    from env0_posttrain.util import torch_threads

    from env0_posttrain.util.devices import resolve_device

    torch_threads.apply(torch)  # the run's count, in the CLI's process and in the Pipes worker alike
    device_name = resolve_device(device)
    # Checked before anything is written or loaded: a CUDA run without its kernels stops here, not at step 1.
    kernels = check_kernels(lora, probe_kernels(device_name == "cuda"),
                            uses_linear_attention(AutoConfig.from_pretrained(str(base_path))))
    for note in kernels.notes:
        log.warning("slow kernels allowed by the spec: %s", note)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    train_rows, eval_rows = split_eval(train_rows, eval_rows, lora)
    device = resolve_device_settings(lora, kernels, device_name)
    tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(str(base_path))
    train_ds = _truncate_to_max_length(rows_to_dataset(train_rows, "train_rows"), tokenizer, lora, device)
    eval_ds = _truncate_to_max_length(rows_to_dataset(eval_rows, "eval_rows"), tokenizer, lora, device) if eval_rows else None
    dtype = torch.bfloat16 if device["bf16"] else torch.float32
    attn = {"attn_implementation": device["attn_implementation"]} if device["attn_implementation"] else {}
    # The LoRA matrices are drawn when the adapter is attached, before the Trainer seeds anything:
    # without this the adapter (and the eval after it) depended on the process's RNG history.
    set_seed(lora.seed)
    model = AutoModelForCausalLM.from_pretrained(str(base_path), dtype=dtype, **attn)
    if init_adapter is not None:
        model = PeftModel.from_pretrained(model, str(init_adapter), is_trainable=True)
    else:
        model = get_peft_model(model, build_lora_config(lora))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    plan = apply_memory_plan(lora, device, model, kernels)
    if plan is not None:
        (log.info if plan.fits else log.warning)("checkpointing: %s", plan.describe())
    callback = MetricsCallback(on_log)
    callbacks: list[Any] = [callback]
    if device.get("checkpoint_layers") is not None:
        from env0_posttrain.train.gpu.layer_checkpointing import LayerCheckpointing

        callbacks.append(LayerCheckpointing(device["checkpoint_layers"]))
    weighted = "weight" in train_ds.column_names  # TITO rows with per-turn loss weights
    if weighted:
        from env0_posttrain.train.weighted_loss import WeightedSFTTrainer as trainer_class
    else:
        trainer_class = SFTTrainer
    from .tracking.progress import show_progress

    resume_from = last_checkpoint(out_dir / CHECKPOINTS_DIRNAME) if resume else None
    with kernel_patches_undone(log):  # the trainer applies Liger here; put transformers back afterwards
        trainer = trainer_class(
            model=model,
            args=build_sft_config(lora, out_dir, eval_ds is not None, device, token_rows="input_ids" in train_ds.column_names),
            train_dataset=train_ds,
            eval_dataset=eval_ds,
            processing_class=tokenizer,
            callbacks=callbacks,
        )
        tensorboard_dir = route_tensorboard(trainer, out_dir / TENSORBOARD_DIRNAME)
        show_progress(trainer, "LoRA training")
        t0 = time.perf_counter()
        trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
        runtime = time.perf_counter() - t0
    evals = [h["eval_loss"] for h in trainer.state.log_history if "eval_loss" in h]
    final_eval = evals[-1] if evals else None

    adapter_dir = out_dir / ADAPTER_DIRNAME
    tmp = out_dir / f".{ADAPTER_DIRNAME}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    choice = CheckpointChoice(rule=lora.checkpoint_choice, step=_best_step(trainer.state))
    if lora.checkpoint_choice == "first_call" and eval_rows:
        ckpts = sorted((out_dir / CHECKPOINTS_DIRNAME).glob("checkpoint-*"), key=checkpoint_step)
        scores, n_prompts = first_call_scores(base_path, ckpts, eval_rows, device=device_name)
        choice = CheckpointChoice(rule="first_call", step=pick_best(scores), scores=scores, n_prompts=n_prompts)
        tmp.mkdir(parents=True)
        for f in (out_dir / CHECKPOINTS_DIRNAME / f"checkpoint-{choice.step}").glob("adapter_*"):
            shutil.copy2(f, tmp / f.name)
    else:
        trainer.model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    state = trainer.state
    history = state.log_history
    train_losses = [h["loss"] for h in history if "loss" in h]
    best_step = _best_step(state)
    summary = {
        "base_path": base_ref or str(base_path), "best_step": best_step, "best_eval_loss": state.best_metric,
        "lora": lora.model_dump(mode="json"), "steps": state.global_step, "checkpoint": choice.model_dump(mode="json"),
        "kernels": kernels.model_dump(mode="json"), "memory_plan": plan.model_dump(mode="json") if plan else None,
    }
    (tmp / "training_summary.json").write_text(json.dumps(summary, indent=2))
    finish_adapter_dir(tmp, CardInfo(
        base_model=base_ref or str(base_path), n_train_rows=len(train_ds),
        hyperparameters=lora.model_dump(mode="json", include=CARD_HYPERPARAMETERS),
        train_summary={"steps": state.global_step, "best_step": best_step, "best_eval_loss": state.best_metric,
                       "final_eval_loss": final_eval, "checkpoint_choice": choice.rule}))
    replace_dir(tmp, adapter_dir)
    return TrainResult(
        adapter_dir=adapter_dir,
        base_path=str(base_path),
        steps=state.global_step,
        best_step=best_step,
        best_eval_loss=state.best_metric,
        final_eval_loss=final_eval,
        first_train_loss=train_losses[0] if train_losses else None,
        final_train_loss=train_losses[-1] if train_losses else None,
        runtime_s=runtime,
        train_tokens=int(state.num_input_tokens_seen or 0),
        n_train_rows=len(train_ds),
        n_eval_rows=len(eval_ds) if eval_ds is not None else 0,
        resumed_from=str(resume_from) if resume_from else None,
        device=device_name,
        trainable_params=trainable,
        kernels=kernels.model_dump(mode="json"),
        memory_plan=plan.model_dump(mode="json") if plan else None,
        metrics=callback.records,
        checkpoint=choice,
        tensorboard_dir=tensorboard_dir,
    )


def _best_step(state) -> int | None:
    if not state.best_model_checkpoint:
        return None
    return int(Path(state.best_model_checkpoint).name.rsplit("-", 1)[-1])
