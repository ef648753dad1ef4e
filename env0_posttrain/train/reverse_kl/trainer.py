"""Train the SFT adapter on the student's own episodes toward a same-tokenizer teacher (loss.py says what it computes).

Episodes come as the store keeps them (`agent.records.Episode`, or its dict): the token ids the harness captured per
model call, joined into one sequence exactly as GRPO joins them (`grpo.episode_sample`), with a mask that is 1 only
on the tokens the student sampled; prompt, tool-result and next-turn template tokens are 0. Before anything is scored
the sampled tokens are checked to be exactly the exchanges' completion ids, in order (`SampledIdsMismatch`).

The teacher scores every episode once (it does not change); an episode it fails on is counted by error kind and
left out. The student's log-probabilities at the start (the SFT adapter, which sampled the episodes) are the fixed
`old` ones of the importance ratio. A plain torch loop: the loss is ours, and PEFT's `PeftModel` carries the adapter.
The model stays in eval mode while it trains, so LoRA dropout cannot make `now` differ from `old` by noise alone.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from env0_posttrain.spec.onpolicy_kl import ReverseKLSpec
from env0_posttrain.train.model_card import CardInfo, finish_adapter_dir
from env0_posttrain.train.reverse_kl.compat import check_teacher_compatible
from env0_posttrain.train.reverse_kl.scorers import TeacherScorer


class SampledIdsMismatch(ValueError):
    """The tokens marked as sampled are not the ids the student's model calls returned."""


@dataclass
class EpisodeTokens:
    key: str
    ids: list[int]
    sampled: list[int]  # per token of `ids`: 1 where the student sampled it
    reward: float
    cut: bool  # the episode went on past a call whose prompt did not extend the sequence (see grpo.episode_sample)

    @property
    def n_sampled(self) -> int:
        return sum(self.sampled)


def _episode(record: Any) -> Any:
    if isinstance(record, dict):
        from env0_posttrain.agent.records import Episode

        return Episode.model_validate(record)
    return record


def episode_tokens(record: Any, max_len: int | None = None) -> EpisodeTokens:
    """One stored episode as (ids, sampled mask, reward), the sampled tokens checked against the model calls."""
    from env0_posttrain.train.grpo import episode_sample

    episode = _episode(record)
    key = f"{getattr(episode, 'task_id', '?')}#{getattr(episode, 'trial', '?')}"
    s = episode_sample(episode)
    ids = s.prompt_ids + s.completion_ids
    sampled = [0] * len(s.prompt_ids) + list(s.env_mask)
    calls = [ex for ex in episode.exchanges if ex.prompt_token_ids is not None and ex.completion_token_ids is not None]
    expected = [t for ex in calls[:s.turns] for t in ex.completion_token_ids]
    got = [t for t, m in zip(ids, sampled, strict=True) if m]
    if got != expected:
        raise SampledIdsMismatch(f"episode {key}: the {len(got)} tokens marked sampled are not the {len(expected)} "
                                 "completion ids of its model calls")
    if max_len is not None:
        ids, sampled = ids[:max_len], sampled[:max_len]
    return EpisodeTokens(key, ids, sampled, float(episode.reward), s.cut)


class ReverseKLResult(BaseModel):
    adapter_dir: Path
    steps: int
    runtime_s: float
    episodes: int  # given
    episodes_trained: int  # with sampled tokens and teacher scores
    empty_episodes: int  # no sampled token (no model call with ids)
    cut_episodes: int
    teacher_errors: dict[str, int]  # by kind: http, shape, ids, nonfinite
    tokens_scored: int  # sampled tokens of the trained episodes
    initial_reverse_kl: float  # mean over those tokens of log p_student - log p_teacher, before training
    final_reverse_kl: float  # the same after training
    metrics: list[dict[str, Any]]
    device: str = "cpu"
    tensorboard_dir: Path | None = None


@dataclass
class _Batch:
    ids: Any
    attention: Any
    target_mask: Any  # [B, T-1]: the target token was sampled by the student
    teacher: Any  # [B, T-1]
    reward_advantage: Any  # [B]


def _batch(items: Sequence[tuple[EpisodeTokens, list[float]]], advantages: Sequence[float], pad_id: int, device: str) -> _Batch:
    import torch

    width = max(len(e.ids) for e, _ in items)
    ids = [e.ids + [pad_id] * (width - len(e.ids)) for e, _ in items]
    attention = [[1] * len(e.ids) + [0] * (width - len(e.ids)) for e, _ in items]
    target = [e.sampled[1:] + [0] * (width - len(e.ids)) for e, _ in items]
    teacher = [lp + [0.0] * (width - 1 - len(lp)) for _, lp in items]
    return _Batch(torch.tensor(ids, device=device), torch.tensor(attention, device=device),
                  torch.tensor(target, device=device), torch.tensor(teacher, device=device),
                  torch.tensor(list(advantages), device=device))


def _mean_kl(model: Any, batches: Sequence[_Batch]) -> tuple[float, list[Any]]:
    """Mean sampled-token reverse KL over `batches` under `model`, and each batch's log-probabilities."""
    import torch

    from env0_posttrain.train.reverse_kl.loss import token_logprobs

    total, tokens, logprobs = 0.0, 0, []
    with torch.no_grad():
        for b in batches:
            lp = token_logprobs(model, b.ids, b.attention)
            logprobs.append(lp)
            m = b.target_mask.to(lp.dtype)
            total += float(((lp - b.teacher) * m).sum())
            tokens += int(m.sum())
    return total / max(tokens, 1), logprobs


def train_reverse_kl(student_base: str | Path, sft_adapter_dir: str | Path, episodes: Sequence[Any],
                     teacher: TeacherScorer, settings: ReverseKLSpec, out_dir: Path, *, run_id: str = "",
                     base_ref: str | None = None, device: str | None = "cpu",
                     on_log: Callable[[dict[str, Any]], None] | None = None) -> ReverseKLResult:
    """Continue the SFT adapter on `episodes` (stored records) by reverse KL to `teacher`; saves the adapter to
    `out_dir/adapter`. Refuses a teacher whose tokenizer or chat template is not the student's (`TeacherMismatch`)."""
    import torch
    from peft import PeftModel
    from torch.utils.tensorboard import SummaryWriter
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed

    from env0_posttrain.train.reverse_kl.loss import reverse_kl_loss, token_logprobs
    from env0_posttrain.train.tracking.trackers import TENSORBOARD_DIRNAME
    from env0_posttrain.util import torch_threads
    from env0_posttrain.util.devices import model_dtype, resolve_device

    t0 = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(student_base))
    check_teacher_compatible(tokenizer, teacher.tokenizer, str(base_ref or student_base), teacher.name)
    torch_threads.apply(torch)
    set_seed(settings.seed)
    device = resolve_device(device)

    samples = [episode_tokens(e, settings.max_seq_len) for e in episodes]
    usable = [s for s in samples if s.n_sampled > 0]
    scores = teacher.score([s.ids for s in usable])
    errors = Counter(sc.error_kind for sc in scores if sc.error)
    kept = [(s, sc.logprobs) for s, sc in zip(usable, scores, strict=True) if sc.logprobs is not None]
    if not kept:
        raise ValueError(f"reverse_kl: none of {len(samples)} episodes can train ({len(samples) - len(usable)} without "
                         f"sampled tokens, teacher errors {dict(errors)})")
    baseline = sum(s.reward for s, _ in kept) / len(kept)
    advantage = [settings.reward_weight * (s.reward - baseline) for s, _ in kept]

    model = AutoModelForCausalLM.from_pretrained(str(student_base), dtype=model_dtype(device))
    model = PeftModel.from_pretrained(model, str(sft_adapter_dir), is_trainable=True).to(device)
    model.eval()
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    per = settings.episodes_per_step
    fixed = [_batch(kept[i:i + per], advantage[i:i + per], pad_id, device) for i in range(0, len(kept), per)]
    initial_kl, old = _mean_kl(model, fixed)
    old_by_episode = [lp[j] for lp, b in zip(old, fixed) for j in range(b.ids.shape[0])]

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate,
                                  weight_decay=0.0)
    tensorboard_dir = Path(out_dir) / TENSORBOARD_DIRNAME if "tensorboard" in settings.report_to else None
    writer = SummaryWriter(log_dir=str(tensorboard_dir)) if tensorboard_dir is not None else None
    rng = random.Random(settings.seed)
    order: list[int] = []
    records: list[dict[str, Any]] = []
    for step in range(1, settings.steps + 1):
        while len(order) < per:  # a fresh shuffle each pass over the episodes
            more = list(range(len(kept)))
            rng.shuffle(more)
            order += more
        pick, order = sorted(order[:per]), order[per:]
        b = _batch([kept[i] for i in pick], [advantage[i] for i in pick], pad_id, device)
        width = b.ids.shape[1] - 1
        old_lp = torch.stack([torch.nn.functional.pad(old_by_episode[i][:width], (0, max(0, width - old_by_episode[i].shape[0])))
                              for i in pick])
        new_lp = token_logprobs(model, b.ids, b.attention)
        parts = reverse_kl_loss(new_lp, old_lp, b.teacher, b.target_mask, settings.kl_coef, b.reward_advantage)
        parts.loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], settings.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        row = {"step": step, "loss": parts.loss.item(), "reverse_kl": parts.reverse_kl, "tokens_scored": parts.tokens,
               "teacher_errors": sum(errors.values()), "grad_norm": float(grad_norm), "wall_s": time.perf_counter() - t0}
        records.append(row)
        if writer is not None:
            for k, v in row.items():
                if k != "step":
                    writer.add_scalar(f"reverse_kl/{k}", v, step)
        if on_log is not None:
            on_log(dict(row))
    final_kl, _ = _mean_kl(model, fixed)
    if writer is not None:
        writer.close()

    adapter_dir = Path(out_dir) / "adapter"
    model.save_pretrained(str(adapter_dir))
    finish_adapter_dir(adapter_dir, CardInfo(
        base_model=base_ref or str(student_base), run_id=run_id,
        dataset_provenance=f"on-policy reverse KL to {teacher.name} on {len(kept)} student episodes after SFT",
        n_train_rows=len(kept), hyperparameters=settings.model_dump(mode="json"),
        train_summary={"steps": settings.steps, "initial_reverse_kl": initial_kl, "final_reverse_kl": final_kl}))
    return ReverseKLResult(
        adapter_dir=adapter_dir, steps=settings.steps, runtime_s=time.perf_counter() - t0, episodes=len(samples),
        episodes_trained=len(kept), empty_episodes=len(samples) - len(usable), cut_episodes=sum(s.cut for s in samples),
        teacher_errors=dict(errors), tokens_scored=sum(s.n_sampled - s.sampled[0] for s, _ in kept),
        initial_reverse_kl=initial_kl, final_reverse_kl=final_kl, metrics=records, device=device,
        tensorboard_dir=tensorboard_dir)

