"""The `onpolicy:` section: on-policy distillation after SFT, one settings model per kind of teacher signal.

The section is a union discriminated by `kind`, so each kind declares its own knobs and a spec names one of them.
`relabel` (the student plays, the teacher writes its own next message at each of the student's states, the student
trains on it: DAgger's rounds); `reverse_kl` (per-token reverse KL against a teacher that shares the student's
tokenizer, on the tokens the student sampled: train/reverse_kl/), whose teacher and loss knobs are the training
core's own settings (spec/onpolicy_kl.py) beside the rounds' common ones.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from env0_posttrain.spec.onpolicy_kl import ReverseKLSpec as ReverseKLSettings
from env0_posttrain.spec.section import Section
from env0_posttrain.spec.training import Tracker, trackers

MAX_COUNT = 1_000_000
MAX_STEPS = 10_000
MAX_SEED = 2**32 - 1
MAX_TEMPERATURE = 10.0
MAX_CONCURRENCY = 4_096


class _Common(Section):
    """What both kinds share: rounds of play on the training tasks, each followed by a training step."""

    rounds: int = Field(default=2, ge=1, le=1_000, description="rounds of play, teacher signal, train")
    tasks_per_round: int | None = Field(default=None, ge=1, le=MAX_COUNT, description="training tasks played per "
                                        "round (a seeded draw, a new one each round); None = every training task")
    fresh_tasks: int = Field(default=0, ge=0, le=MAX_COUNT, description="prompts beyond the training split: this "
                             "many new tasks of the run's training templates join the tasks the rounds draw from "
                             "(none of the run's eval or held-out tasks; the teacher supplies every target, so they "
                             "need no teacher trajectory); generated task sets only, not tasks.source")
    trials_per_round: int = Field(default=1, ge=1, le=1_000, description="episodes per task per round")
    temperature: float | None = Field(default=None, ge=0.0, le=MAX_TEMPERATURE, description="sampling temperature of "
                                      "the student's training episodes; None = eval.temperature (the eval arms' own)")
    max_steps_per_episode: int | None = Field(default=None, ge=1, le=MAX_STEPS, description="None = eval's limit")
    learning_rate: float = Field(default=1e-3, gt=0.0, le=1.0)
    steps_per_round: int = Field(default=50, ge=1, le=MAX_COUNT, description="optimizer steps after each round, on "
                                 "every row gathered so far")
    per_device_batch_size: int | None = Field(default=None, ge=1, le=MAX_CONCURRENCY, description="None = "
                                              "lora.per_device_batch_size")
    logging_steps: int = Field(default=5, ge=1, le=MAX_COUNT)
    report_to: list[Tracker] = trackers()
    seed: int = Field(default=0, ge=0, le=MAX_SEED)


class RelabelSpec(_Common):
    """The teacher (any litellm model: hosted, served or the offline oracle) is asked, at each assistant turn of the
    student's episode, for its own next message given the conversation so far; the student trains on it there."""

    kind: Literal["relabel"] = "relabel"
    teacher_model: str | None = Field(default=None, min_length=1, description="litellm id of the relabelling "
                                      "teacher; None = teacher.model (with its api_base, key and skill)")
    teacher_concurrency: int | None = Field(default=None, ge=1, le=MAX_CONCURRENCY, description="relabel requests "
                                            "in flight; None = teacher.concurrency")
    keep_sft_rows: bool = Field(default=False, description="also train each round on the SFT rows (the teacher's own "
                                "states), beside the relabelled rows of every round so far")
    agreeing_turns: Literal["keep", "drop"] = Field(default="keep", description="turns where the student already "
                                                    "wrote the teacher's message: keep them as rows, or drop them")
    entity_swaps: int = Field(default=0, ge=0, le=64, description="beside each relabelled row, this many copies with "
                              "the company's entities renamed by a seeded permutation of each class (people, groups, "
                              "channels, subjects, phrases, titles, ...; train/entity_swap.py), so a slot the request "
                              "names is learnt as a copy; generated task sets only, not tasks.source")
    entity_weight: float = Field(default=1.0, gt=0.0, le=100.0, description="loss weight of the teacher's tokens "
                                 "that spell one of those entities, in relabelled rows and their copies (every other "
                                 "trained token weighs 1); generated task sets only, not tasks.source")


class ReverseKLSpec(_Common, ReverseKLSettings):
    """Per-token reverse KL between the student and a teacher sharing its tokenizer, on the tokens the student sampled
    in the round's episodes (tool results and prompt masked), optionally mixed with the verifier's reward. The teacher
    and loss knobs are the training core's (spec/onpolicy_kl.py); each round trains `steps_per_round` steps."""

    kind: Literal["reverse_kl"] = "reverse_kl"
    learning_rate: float = Field(default=5e-4, gt=0.0, le=1.0)
    temperature: float | None = Field(default=1.0, ge=0.0, le=MAX_TEMPERATURE, description="must be 1: the loss "
                                      "takes the sampled tokens as draws from the student's own distribution")

    @model_validator(mode="after")
    def _round_knobs(self) -> "ReverseKLSpec":
        if self.temperature != 1.0:
            raise ValueError(f"temperature is {self.temperature}: reverse_kl's round play samples at temperature 1 "
                             "(the loss estimates the KL from draws of the student's own distribution)")
        if "steps" in self.model_fields_set and self.steps != self.steps_per_round:
            raise ValueError(f"steps ({self.steps}): a reverse_kl round trains steps_per_round "
                             f"({self.steps_per_round}) steps; set steps_per_round")
        object.__setattr__(self, "steps", self.steps_per_round)  # the core's own knob mirrors the round's
        return self


def _kind(value: Any) -> str | None:
    """A section without `kind` is a relabel one (the kind that runs offline)."""
    if isinstance(value, dict):
        return value.get("kind", "relabel")
    return getattr(value, "kind", None)


OnPolicySpec = Annotated[Annotated[RelabelSpec, Tag("relabel")] | Annotated[ReverseKLSpec, Tag("reverse_kl")],
                         Discriminator(_kind)]
