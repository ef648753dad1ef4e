"""The `reverse_kl` kind of the on-policy stage: a same-tokenizer teacher scores the student's own sampled tokens.

Kept in its own module (not runspec.py) so the stage's `kind` union imports it; it imports nothing from runspec.py,
which will import it. What the settings drive: train/reverse_kl/ (trainer, scorers, tiny teacher); why: docs/RL.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from env0_posttrain.spec.section import Section
from env0_posttrain.spec.training import Tracker, trackers

_MAX_COUNT = 1_000_000
_MAX_SEED = 2**32 - 1


class TinyTeacherSpec(Section):
    """The offline teacher: the tiny student's tokenizer and architecture at a larger size, trained on the teacher's
    SFT rows (train/reverse_kl/tiny_teacher.py). Cached by the digest of these fields, the rows and the tokenizer."""

    hidden_size: int = Field(default=256, ge=16, le=8192)
    num_layers: int = Field(default=4, ge=1, le=128)
    num_heads: int = Field(default=8, ge=1, le=256)
    num_kv_heads: int = Field(default=2, ge=1, le=256)
    intermediate_size: int = Field(default=768, ge=16, le=65_536)
    train_steps: int = Field(default=150, ge=1, le=_MAX_COUNT, description="optimizer steps over the SFT rows")
    learning_rate: float = Field(default=2e-3, gt=0.0, le=1.0)
    batch_size: int = Field(default=8, ge=1, le=4096)
    max_seq_len: int = Field(default=1024, ge=16, le=1_048_576, description="a longer row is cut here")
    seed: int = Field(default=0, ge=0, le=_MAX_SEED)

    @model_validator(mode="after")
    def _heads_divide(self) -> "TinyTeacherSpec":
        if self.hidden_size % self.num_heads or self.num_heads % self.num_kv_heads:
            raise ValueError(f"tiny_teacher: hidden_size ({self.hidden_size}) must be a multiple of num_heads "
                             f"({self.num_heads}), and num_heads of num_kv_heads ({self.num_kv_heads})")
        return self


class ReverseKLSpec(Section):
    """Per-token reverse KL to a same-tokenizer teacher on the tokens the student sampled in its own episodes,
    optionally mixed with the verifier's reward; trains the SFT adapter on (train/reverse_kl/trainer.py)."""

    kind: Literal["reverse_kl"] = "reverse_kl"
    teacher: Literal["tiny", "local", "server"] = Field(
        default="tiny", description="tiny: a teacher built here from the teacher's SFT rows (offline); local: a "
        "transformers checkpoint at teacher_path; server: a vLLM/SGLang OpenAI-compatible server at server_url")
    teacher_path: str | None = Field(default=None, description="local: the checkpoint; server: the served model's "
                                     "tokenizer (a directory or hub name), checked against the student's")
    server_url: str | None = Field(default=None, description="the server's OpenAI base, e.g. http://host:8000/v1")
    server_model: str | None = Field(default=None, description="the served model's name")
    server_mode: Literal["prompt_logprobs", "echo"] = Field(
        default="prompt_logprobs", description="prompt_logprobs: vLLM's extension; echo: echo + logprobs with "
        "return_tokens_as_token_ids (vLLM's and SGLang's OpenAI completions)")
    server_timeout_s: float = Field(default=120.0, gt=0.0, le=3600.0)
    server_api_key_env: str | None = Field(default=None, description="name of the env var holding the key; never the key")
    tiny_teacher: TinyTeacherSpec = Field(default_factory=TinyTeacherSpec)
    learning_rate: float = Field(default=5e-4, gt=0.0, le=1.0)
    steps: int = Field(default=20, ge=1, le=_MAX_COUNT, description="optimizer steps over the stored episodes")
    episodes_per_step: int = Field(default=8, ge=1, le=4096)
    kl_coef: float = Field(default=1.0, ge=0.0, le=1_000.0, description="weight of the reverse-KL advantage")
    reward_weight: float = Field(default=0.0, ge=0.0, le=1_000.0, description="weight of the verifier's reward "
                                 "(minus the episodes' mean) added to every sampled token's advantage; 0 = pure KL")
    max_seq_len: int = Field(default=8192, ge=16, le=1_048_576, description="an episode's tokens past this are not "
                             "trained")
    max_grad_norm: float = Field(default=1.0, gt=0.0, le=1_000.0)
    report_to: list[Tracker] = trackers()
    seed: int = Field(default=0, ge=0, le=_MAX_SEED)

    @model_validator(mode="after")
    def _teacher_named(self) -> "ReverseKLSpec":
        if self.teacher == "local" and not self.teacher_path:
            raise ValueError("reverse_kl.teacher_path is required when reverse_kl.teacher is local")
        if self.teacher == "server":
            missing = [f for f in ("server_url", "server_model", "teacher_path") if not getattr(self, f)]
            if missing:
                raise ValueError(f"reverse_kl.teacher is server: {', '.join('reverse_kl.' + m for m in missing)} "
                                 "required (teacher_path: the served model's tokenizer, to check it is the student's)")
        if self.kl_coef == 0 and self.reward_weight == 0:
            raise ValueError("reverse_kl: kl_coef and reward_weight are both 0: nothing to train on")
        return self
