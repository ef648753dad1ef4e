"""Which saved checkpoint becomes the adapter: lowest eval loss, or best first-call match.

Eval loss can keep falling while the first tool call (the turn that decides most tasks) gets
worse. The `first_call` choice replays the held-back training prompts up to their first
assistant turn on every checkpoint and keeps the one whose first tool call matches the
recorded one most often (ties go to the later step). Scores are recorded with the adapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class CheckpointChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule: str = Field(description="eval_loss or first_call")
    step: int | None = Field(description="the chosen checkpoint's step; None = the final weights")
    scores: dict[int, int] = Field(default_factory=dict, description="first_call: step -> prompts matched")
    n_prompts: int = 0


def checkpoint_step(path: Path) -> int:
    return int(path.name.rsplit("-", 1)[-1])


def pick_best(scores: dict[int, int]) -> int:
    """The step with the most matches; the later step wins a tie (it saw more data)."""
    if not scores:
        raise ValueError("no checkpoints to choose from")
    return max(scores, key=lambda step: (scores[step], step))


def first_call_scores(base_path: str | Path, checkpoints: Sequence[Path], rows: Sequence[dict[str, Any]],
                      max_new_tokens: int = 96, device: str = "cpu") -> tuple[dict[int, int], int]:
    """Per checkpoint, how many held-back prompts get their recorded first tool call exactly (scored on `device`,
    where the adapter trained)."""
    from env0_posttrain.util.devices import load_causal_lm
    from env0_posttrain.train.generation import first_call_prompt, greedy_completions, load_tokenizer_with_parser
    from env0_posttrain.train.probe.verdict import first_call_matches
    from env0_posttrain.train.rows import rows_to_dataset

    tok = load_tokenizer_with_parser(base_path)
    prompts, expected = [], []
    for r in rows_to_dataset(list(rows), "probe_rows"):
        msgs, call = first_call_prompt(r)
        if call is not None:
            prompts.append((msgs, r["tools"]))
            expected.append(call)
    if not prompts:
        raise ValueError("first_call checkpoint choice: no held-back row opens with a tool call")
    scores = {}
    for ckpt in checkpoints:
        model = load_causal_lm(base_path, device, adapter=ckpt)
        scores[checkpoint_step(ckpt)] = sum(first_call_matches(tok, greedy_completions(model, tok, prompts,
                                                                                        max_new_tokens), expected))
    return scores, len(prompts)
