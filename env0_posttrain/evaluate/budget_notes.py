"""The report's budget notes: where an arm's step or token limit, not the model, may have decided its episodes.

A limit below what the oracle's replay of a task needs (or below the model calls the teacher's own passing
episodes took) caps every arm alike, so a low pass rate there says little about the model; the note says so beside
the suite's numbers instead of leaving the reader to find it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from env0_posttrain.evaluate.metrics import n_steps

CHARS_PER_TOKEN = 4  # a rough estimate of an oracle call's completion tokens (JSON arguments)


def budget_notes(tasks: Sequence, teacher_limits: tuple[int, int], eval_limits: tuple[int, int],
                 episodes: Sequence = ()) -> list[str]:
    """Where an arm's (max steps, max tokens) is below what the oracle's replay of a task takes, or the eval arms'
    steps below the model calls the teacher's passing episodes on the suite took."""
    need_steps = [len(t.oracle) + 1 for t in tasks]  # one call per step, then the final reply
    need_tokens = [max((len(json.dumps({"name": c.name, "arguments": c.arguments})) // CHARS_PER_TOKEN
                        for c in t.oracle), default=0) for t in tasks]
    notes = []
    for arms, (steps, tokens) in (("teacher_eval", teacher_limits), ("base, sft, rl", eval_limits)):
        short_s = sum(n > steps for n in need_steps)
        short_t = sum(n > tokens for n in need_tokens)
        if short_s:
            notes.append(f"{arms}: {steps} steps is below the oracle's need on {short_s} of {len(tasks)} tasks "
                         f"(up to {max(need_steps)} model calls)")
        if short_t:
            notes.append(f"{arms}: {tokens} tokens per call is below the oracle's longest call on {short_t} of "
                         f"{len(tasks)} tasks (about {max(need_tokens)} tokens at {CHARS_PER_TOKEN} characters each)")
    steps = eval_limits[0]
    teacher = [n_steps(e) for e in episodes if e.arm == "teacher_eval" and e.passed]
    if over := sum(n > steps for n in teacher):
        notes.append(f"base, sft, rl: {steps} steps is below what {over} of the teacher's {len(teacher)} passing "
                     f"episodes took (up to {max(teacher)} model calls)")
    return notes
