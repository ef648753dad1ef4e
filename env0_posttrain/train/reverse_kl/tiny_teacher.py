"""The offline teacher for `reverse_kl`: the tiny student's tokenizer and architecture, larger, trained on the
teacher's SFT rows.

Reverse KL needs a teacher that reads the student's token ids; offline there is no such checkpoint, so one is built
here the way the tiny student is (tiny_student/build.py): a real transformers config at toy scale, the student's own
tokenizer saved beside it (so `check_teacher_compatible` passes byte for byte), a causal-LM run with transformers'
Trainer over the rows rendered by the chat template. It is cached by the digest of what its weights depend on
(spec, rows, the student's tokenizer files, architecture, torch threads), built once under a file lock in a temporary
directory renamed into place.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from env0_posttrain.spec.onpolicy_kl import TinyTeacherSpec
from env0_posttrain.util.digests import canonical_json, sha256_hex
from env0_posttrain.util.fsutil import replace_dir

MARKER_FILE = "tiny_teacher.json"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")


def clean_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """TRL rows checked like SFT's (`train.rows.normalise_row`): a bad row is refused naming its index and field."""
    from env0_posttrain.train.rows import normalise_row

    return [normalise_row(r, i, "teacher rows") for i, r in enumerate(rows)]


def teacher_digest(student_dir: Path, rows: Sequence[dict[str, Any]], spec: TinyTeacherSpec, threads: int) -> str:
    """What the teacher's weights depend on: spec, rows, the student's tokenizer files and architecture, and the torch
    thread count (it sets the order of floating-point sums)."""
    student_dir = Path(student_dir)
    rows = clean_rows(rows)
    files = [(student_dir / f).read_bytes() for f in TOKENIZER_FILES if (student_dir / f).exists()]
    arch = json.loads((student_dir / "config.json").read_text()).get("model_type", "")
    return sha256_hex(spec.model_dump_json(), arch, f"torch_threads={threads}", *files,
                      *(canonical_json(r) + "\x00" for r in rows), n=16)


def _model_config(spec: TinyTeacherSpec, student_dir: Path, tokenizer: Any) -> Any:
    from transformers import AutoConfig

    from env0_posttrain.train.tiny_student.build import TinyStudentConfig, build_model_config

    student = AutoConfig.from_pretrained(str(student_dir))
    if student.model_type not in ("qwen3", "qwen3_5_text"):
        raise ValueError(f"{student_dir}: a tiny teacher is built for a tiny student (qwen3 / qwen3_5_text), "
                         f"not {student.model_type!r}")
    shape = TinyStudentConfig(architecture=student.model_type, hidden_size=spec.hidden_size, num_layers=spec.num_layers,
                              num_heads=spec.num_heads, num_kv_heads=spec.num_kv_heads,
                              intermediate_size=spec.intermediate_size,
                              max_position_embeddings=student.max_position_embeddings, pretrain_steps=0, seed=spec.seed)
    return build_model_config(shape, tokenizer)


def _train(model: Any, tokenizer: Any, texts: list[str], spec: TinyTeacherSpec, work: Path) -> dict[str, float]:
    import torch
    from datasets import Dataset
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

    ids = [tokenizer(t, add_special_tokens=False)["input_ids"][:spec.max_seq_len] for t in texts]
    args = TrainingArguments(
        output_dir=str(work / "train"), max_steps=spec.train_steps, per_device_train_batch_size=spec.batch_size,
        learning_rate=spec.learning_rate, lr_scheduler_type="cosine", warmup_steps=max(1, spec.train_steps // 20),
        weight_decay=0.01, logging_steps=max(1, spec.train_steps // 10), save_strategy="no", report_to=[],
        use_cpu=not torch.cuda.is_available(), seed=spec.seed, disable_tqdm=True, dataloader_num_workers=0,
    )
    # the pad token (<|endoftext|>) never occurs in a rendered chat, so masking it from the labels hides only padding
    collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)
    trainer = Trainer(model=model, args=args, train_dataset=Dataset.from_dict({"input_ids": ids}), data_collator=collator)
    out = trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return {"train_loss_first": losses[0] if losses else float("nan"), "train_loss_last": losses[-1] if losses else float("nan"),
            "train_runtime_s": out.metrics.get("train_runtime", 0.0), "rows": len(ids), "row_tokens": sum(map(len, ids))}


def _build(dest: Path, student_dir: Path, rows: list[dict[str, Any]], spec: TinyTeacherSpec) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from env0_posttrain.util import torch_threads

    torch_threads.apply(torch)
    torch.manual_seed(spec.seed)
    tokenizer = AutoTokenizer.from_pretrained(str(student_dir))
    texts = [tokenizer.apply_chat_template(r["messages"], tools=r.get("tools"), tokenize=False) for r in rows]
    model = AutoModelForCausalLM.from_config(_model_config(spec, student_dir, tokenizer))
    stats = _train(model, tokenizer, texts, spec, dest)
    shutil.rmtree(dest / "train", ignore_errors=True)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(dest)
    tokenizer.save_pretrained(dest)
    info = {"spec": spec.model_dump(mode="json"), "student": str(student_dir),
            "n_params": sum(p.numel() for p in model.parameters()), "torch_threads": torch_threads.current().threads,
            **stats}
    (dest / MARKER_FILE).write_text(json.dumps(info, indent=2))


def ensure_tiny_teacher(cache_dir: Path, student_dir: Path, rows: Sequence[dict[str, Any]],
                        spec: TinyTeacherSpec | None = None) -> Path:
    """The teacher directory for (student tokenizer, rows, spec), building it at most once. `rows`: TRL rows
    ({"messages", "tools"}), checked like SFT's."""
    from env0_posttrain.util import torch_threads

    spec = spec or TinyTeacherSpec()
    if not rows:
        raise ValueError("ensure_tiny_teacher: no teacher rows to train on")
    clean = clean_rows(rows)
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    dest = cache_dir / f"tiny-teacher-{teacher_digest(student_dir, rows, spec, torch_threads.current().threads)}"
    if (dest / MARKER_FILE).exists():
        return dest
    with open(cache_dir / f".{dest.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (dest / MARKER_FILE).exists():
            return dest
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=cache_dir))
        try:
            _build(tmp, Path(student_dir), clean, spec)
            replace_dir(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def teacher_info(path: Path) -> dict[str, Any]:
    return json.loads((Path(path) / MARKER_FILE).read_text())
