"""The `reverse_kl` kind of on-policy distillation: a same-tokenizer teacher scores the tokens the student sampled in
its own episodes, and the SFT adapter trains on the per-token reverse KL (docs/RL.md).

    from env0_posttrain.train.reverse_kl import check_teacher_compatible, teacher_from_spec, train_reverse_kl

`compat` refuses a teacher that reads ids differently, `scorers` holds the local and server teachers, `loss` the
estimator, `trainer` the LoRA loop, `tiny_teacher` the offline teacher. Names resolve lazily (no torch on import).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "TeacherMismatch": "compat", "check_teacher_compatible": "compat", "compatibility_problems": "compat",
    "TeacherScore": "scorers", "TeacherScorer": "scorers", "LocalTeacher": "scorers", "ServerTeacher": "scorers",
    "teacher_from_spec": "scorers",
    "reverse_kl_loss": "loss", "token_logprobs": "loss", "vocab_reverse_kl": "loss",
    "EpisodeTokens": "trainer", "SampledIdsMismatch": "trainer", "episode_tokens": "trainer",
    "ReverseKLResult": "trainer", "train_reverse_kl": "trainer",
    "ensure_tiny_teacher": "tiny_teacher", "teacher_info": "tiny_teacher",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'env0_posttrain.train.reverse_kl' has no attribute {name!r}")
    return getattr(importlib.import_module(f"env0_posttrain.train.reverse_kl.{_EXPORTS[name]}"), name)
