"""The reverse-KL loss on the tokens the student sampled, and the log-probabilities it is computed from.

The sampled-token estimator, not the exact KL over the vocabulary: a served teacher (vLLM, SGLang) returns the
log-probability of the tokens it is sent, not its whole distribution, so only this form works with every teacher,
and it costs one number per token instead of a vocabulary-wide row. At a state s the student reached, with x sampled
from the student, (log p_student(x|s) - log p_teacher(x|s)) is an unbiased one-sample estimate of
KL(p_student || p_teacher) at s, and its score-function gradient is the exact KL's gradient in expectation. So every
sampled token gets the advantage

    A_t = -kl_coef * (log p_old(x_t) - log p_teacher(x_t)) + reward_weight * (reward - baseline)

(p_old: the student that sampled, fixed before training) and the loss is the importance-weighted policy gradient
-mean_t ratio_t * A_t, ratio_t = p_now(x_t) / p_old(x_t), over the student's own tokens only (prompt and tool-result
tokens are masked). `vocab_reverse_kl` is the exact KL, for measuring it where both models are local.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def token_logprobs(model: Any, input_ids: Any, attention_mask: Any) -> Any:
    """[B, T-1]: log p(input_ids[:, i+1] | input_ids[:, :i+1]) under `model` (right padding; padded places are junk)."""
    import torch

    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1].float()
    return torch.log_softmax(logits, dim=-1).gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)


@dataclass
class LossParts:
    loss: Any  # scalar tensor, with grad
    reverse_kl: float  # mean over scored tokens of log p_now - log p_teacher
    tokens: int


def reverse_kl_loss(new_logprobs: Any, old_logprobs: Any, teacher_logprobs: Any, mask: Any, kl_coef: float = 1.0,
                    reward_advantage: Any = None) -> LossParts:
    """All [B, T] aligned on the same target tokens; `mask` 1 on the student's sampled tokens; `reward_advantage`
    [B] (already weighted and baselined) or None."""
    import torch

    mask = mask.to(new_logprobs.dtype)
    advantage = -kl_coef * (old_logprobs - teacher_logprobs).detach()
    if reward_advantage is not None:
        advantage = advantage + reward_advantage.detach().to(new_logprobs.dtype).unsqueeze(-1)
    ratio = torch.exp(new_logprobs - old_logprobs.detach())
    tokens = mask.sum()
    loss = -(ratio * advantage * mask).sum() / tokens.clamp(min=1.0)
    kl = ((new_logprobs.detach() - teacher_logprobs) * mask).sum() / tokens.clamp(min=1.0)
    return LossParts(loss=loss, reverse_kl=float(kl), tokens=int(tokens))


def vocab_reverse_kl(student_logits: Any, teacher_logits: Any, mask: Any) -> float:
    """Mean over masked positions of the exact KL(p_student || p_teacher) over the vocabulary ([B, T, V] logits)."""
    import torch

    s = torch.log_softmax(student_logits.float(), dim=-1)
    t = torch.log_softmax(teacher_logits.float(), dim=-1)
    per_position = (s.exp() * (s - t)).sum(-1)
    mask = mask.to(per_position.dtype)
    return float((per_position * mask).sum() / mask.sum().clamp(min=1.0))
