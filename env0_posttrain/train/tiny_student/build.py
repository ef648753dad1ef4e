"""The offline student: a tiny model of a real architecture, built once from local text and cached.

LoRA on a randomly initialised base barely moves (FIELD-NOTES), so the base gets a short full
pre-training (`student_corpus`): the company, plain-text replies that copy a request's entities,
and function calling on made-up practice tools. It never calls a workspace tool, so the base
really cannot do the tasks: what the adapter gains is what the SFT rows taught it.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.train.tiny_student.tokenizer import build_tokenizer, check_round_trip
from env0_posttrain.util.fsutil import replace_dir
from env0_posttrain.util.digests import sha256_hex

CorpusItem = str | Mapping[str, Any]
MARKER_FILE = "tiny_student.json"


class TinyStudentConfig(BaseModel):
    """Shape of the tiny student and of its base pre-training."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    architecture: Literal["qwen3", "qwen3_5_text"] = "qwen3"
    hidden_size: int = Field(default=192, ge=16)
    num_layers: int = Field(default=3, ge=1)
    num_heads: int = Field(default=6, ge=1)
    num_kv_heads: int = Field(default=2, ge=1)
    intermediate_size: int = Field(default=512, ge=16)
    vocab_size: int = Field(default=2000, ge=300, description="BPE merges target; entity tokens come on top")
    max_position_embeddings: int = Field(default=4096, ge=64)
    pretrain_steps: int = Field(default=1200, ge=0)
    pretrain_lr: float = Field(default=3e-3, gt=0.0)
    pretrain_batch_size: int = Field(default=8, ge=1)
    pretrain_seq_len: int = Field(default=256, ge=16)
    seed: int = 0

    def digest(self) -> str:
        return sha256_hex(self.model_dump_json(), n=16)


def corpus_text(item: CorpusItem, tokenizer=None) -> str:
    """A corpus item is plain text, or a conversation {"messages", "tools"?} rendered with the chat template."""
    if isinstance(item, str):
        return item
    if tokenizer is None:
        return json.dumps(item, sort_keys=True, default=str)
    return tokenizer.apply_chat_template(list(item["messages"]), tools=item.get("tools"), tokenize=False)


def student_digest(corpus: Sequence[CorpusItem], entity_tokens: Sequence[str], config: TinyStudentConfig,
                   threads: int | None = None) -> str:
    """What the built weights depend on: recipe, corpus, entities and the torch thread count of the pre-training
    (it sets the order of floating-point sums; None, for students built before it was recorded, leaves it out)."""
    texts = (chunk for item in corpus for chunk in (corpus_text(item), b"\x00"))
    extra = () if threads is None else (f"torch_threads={threads}",)
    return sha256_hex(config.model_dump_json(), *texts, json.dumps(list(entity_tokens)), *extra, n=16)


def build_model_config(config: TinyStudentConfig, tokenizer=None, vocab_size: int | None = None):
    """A real transformers config (Qwen3, or the 9B's hybrid qwen3_5_text) at toy scale; `vocab_size` without a
    tokenizer gives the same shape for benches that feed random ids (pad 0, eos 1)."""
    from transformers import AutoConfig

    common = dict(
        vocab_size=len(tokenizer) if tokenizer is not None else vocab_size,
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_kv_heads,
        head_dim=config.hidden_size // config.num_heads,
        max_position_embeddings=config.max_position_embeddings,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id if tokenizer is not None else 0,
        eos_token_id=tokenizer.eos_token_id if tokenizer is not None else 1,
        bos_token_id=None,
    )
    if config.architecture == "qwen3_5_text":
        n = config.num_layers
        layer_types = ["full_attention" if (i + 1) % 4 == 0 or i == n - 1 else "linear_attention" for i in range(n)]
        head = config.hidden_size // config.num_heads
        common.update(
            layer_types=layer_types,
            linear_num_key_heads=config.num_kv_heads,
            linear_num_value_heads=config.num_heads,
            linear_key_head_dim=head,
            linear_value_head_dim=head,
        )
    return AutoConfig.for_model(config.architecture, **common)


def pretrain_blocks(docs: Sequence[list[int]], n_blocks: int, block_len: int, separator: int, seed: int) -> list[list[int]]:
    """`n_blocks` fixed-length blocks cut from the documents concatenated in a fresh random order per pass.

    Every pass mixes kinds of text (drills, chats, facts) differently, so a block is never seen
    twice: the base has to learn to copy instead of remembering which entity followed which. (The
    same corpus cut once into fixed blocks and repeated for 2.5 epochs gave a base that did not copy.)
    """
    import random

    rng = random.Random(seed)
    stream: list[int] = []
    blocks: list[list[int]] = []
    if not any(docs):
        return blocks
    while len(blocks) < n_blocks:
        order = list(range(len(docs)))
        rng.shuffle(order)
        for i in order:
            stream.extend(docs[i])
            stream.append(separator)
            while len(stream) >= block_len and len(blocks) < n_blocks:
                blocks.append(stream[:block_len])
                del stream[:block_len]
    return blocks


def _pretrain(model, tokenizer, texts: list[str], config: TinyStudentConfig, work: Path,
              report_to: Sequence[str] = ()) -> dict[str, float]:
    """Full causal-LM pre-training with transformers' Trainer on freshly mixed blocks (`pretrain_blocks`); curves go
    to `report_to` (TensorBoard's event files to `work/tensorboard`, kept with the student)."""
    import torch
    from datasets import Dataset
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

    from env0_posttrain.train.tracking.trackers import TENSORBOARD_DIRNAME, report_to_list, route_tensorboard
    from env0_posttrain.util import torch_threads

    torch_threads.apply(torch)
    docs = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    n_blocks = config.pretrain_steps * config.pretrain_batch_size
    blocks = pretrain_blocks(docs, n_blocks, config.pretrain_seq_len, tokenizer.pad_token_id, config.seed)
    ds = Dataset.from_dict({"input_ids": blocks})
    args = TrainingArguments(
        output_dir=str(work / "pretrain"),
        max_steps=config.pretrain_steps,
        per_device_train_batch_size=config.pretrain_batch_size,
        learning_rate=config.pretrain_lr,
        lr_scheduler_type="cosine_with_min_lr",
        lr_scheduler_kwargs={"min_lr_rate": 0.1},
        warmup_steps=max(1, config.pretrain_steps // 24),
        weight_decay=0.01,
        adam_beta2=0.98,
        logging_steps=max(1, config.pretrain_steps // 10),
        save_strategy="no",
        report_to=report_to_list(report_to),
        use_cpu=not torch.cuda.is_available(),
        seed=config.seed,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    # The pad token doubles as the document separator; it must stay a training target here.
    collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)
    trainer = Trainer(model=model, args=args, train_dataset=ds, data_collator=_keep_separators(collator, tokenizer))
    route_tensorboard(trainer, work / TENSORBOARD_DIRNAME)
    from ..tracking.progress import show_progress

    show_progress(trainer, f"base student ({config.architecture}) pre-training")
    out = trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return {"pretrain_loss_first": losses[0] if losses else float("nan"), "pretrain_loss_last": losses[-1] if losses else float("nan"),
            "pretrain_runtime_s": out.metrics.get("train_runtime", 0.0), "pretrain_blocks": len(blocks),
            "corpus_tokens": sum(len(d) + 1 for d in docs)}


def _keep_separators(collator, tokenizer):
    def collate(features):
        batch = collator(features)
        batch["labels"] = batch["input_ids"].clone()
        return batch

    return collate


def _without(texts: Sequence[str], whole: Sequence[str]):
    from env0_posttrain.train.tiny_student.tokenizer import (
        MARKER_TOKENS,
        SPECIAL_TOKENS,
        template_boilerplate,
    )

    cut = sorted({*whole, *MARKER_TOKENS, *SPECIAL_TOKENS, *template_boilerplate()}, key=len, reverse=True)
    for text in texts:
        for w in cut:
            if w and w in text:
                text = text.replace(w, " ")
        yield text


def _build(dest: Path, corpus: Sequence[CorpusItem], entity_tokens: Sequence[str], config: TinyStudentConfig,
           report_to: Sequence[str] = ()) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from env0_posttrain.util import torch_threads
    from env0_posttrain.util.devices import device_label

    torch.manual_seed(config.seed)
    # BPE merges come from exactly the text the base will read (conversations rendered with the
    # template), whole tokens cut out: a merge the base never reads would keep a near-zero embedding.
    bootstrap = build_tokenizer([c for c in corpus if isinstance(c, str)][:1000] or ["x"], [], 300)
    texts = [corpus_text(c, bootstrap) for c in corpus]
    tokenizer = build_tokenizer(_without(texts, entity_tokens), entity_tokens, config.vocab_size)
    for text in texts[:20]:
        check_round_trip(tokenizer, text)
    model = AutoModelForCausalLM.from_config(build_model_config(config, tokenizer))
    stats: dict[str, Any] = {"torch_threads": torch_threads.current().threads}
    if config.pretrain_steps > 0:
        stats |= _pretrain(model, tokenizer, texts, config, dest, report_to)
        shutil.rmtree(dest / "pretrain", ignore_errors=True)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(dest)
    tokenizer.save_pretrained(dest)
    info = {
        "config": config.model_dump(mode="json"),
        "n_params": sum(p.numel() for p in model.parameters()),
        "vocab": len(tokenizer),
        "corpus_items": len(corpus),
        "entity_tokens": len(entity_tokens),
        "built_on": device_label("cpu"),  # the kernels set its weights' last digits (util/devices.py)
        **stats,
    }
    (dest / MARKER_FILE).write_text(json.dumps(info, indent=2))


def ensure_tiny_student(
    cache_dir: Path, corpus: Sequence[CorpusItem], entity_tokens: Sequence[str], config: TinyStudentConfig | None = None,
    report_to: Sequence[str] = (), shipped_root: Path | None = None, use_shipped: bool = True,
) -> Path:
    """Return the student directory for (config, corpus, entities), building it at most once. `report_to`: where the
    pre-training's curves go (logging only: not part of the directory's digest). A student shipped for the same
    recipe (`shipped.py`; `shipped_root`, default the package's) is copied in, digest-checked, instead of built,
    unless `use_shipped` is off (a rebuild).

    Concurrent callers serialise on a file lock; the build happens in a temporary directory that
    is renamed into place, so a crash never leaves a half-written student behind.
    """
    config = config or TinyStudentConfig()
    if not corpus:
        raise ValueError("ensure_tiny_student: the corpus is empty")
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    from env0_posttrain.train.tiny_student import shipped
    from env0_posttrain.util import torch_threads

    threads = torch_threads.current().threads
    dest = cache_dir / f"tiny-{config.architecture}-{student_digest(corpus, entity_tokens, config, threads)}"
    if (dest / MARKER_FILE).exists():
        return dest
    root = shipped.SHIPPED_ROOT if shipped_root is None else Path(shipped_root)
    entry = shipped.find_shipped(student_digest(corpus, entity_tokens, config), config.architecture, root) \
        if use_shipped else None
    if entry is not None:
        return shipped.install(entry, cache_dir, MARKER_FILE, root)
    with open(cache_dir / f".{dest.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (dest / MARKER_FILE).exists():
            return dest
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=cache_dir))
        try:
            _build(tmp, corpus, entity_tokens, config, report_to)
            replace_dir(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def student_info(path: Path) -> dict[str, Any]:
    return json.loads((Path(path) / MARKER_FILE).read_text())
