"""A task template: one kind of job, parameterised over the seeded company.

A template is data plus four small functions, so the generator, the verifier and the task
directory exporter can all treat every family alike:

* ``sample(rng, ws) -> params``   draws JSON-able parameters (who, what, which file) from the
  seeded company; the params are the task's ``recipe.items`` and fully define the task.
* ``plant(ws, params)``           puts the task's items into a freshly seeded workspace through
  the services' seeding helpers (must be deterministic: the recipe is replayed on every build).
* ``solve(ws, params)``           the oracle: tool calls computed against the planted workspace.
* ``judge(j, params)``            the verifier: scores start/end state and the final answer
  through a :class:`~env0_posttrain.tasks.judge.Judge`; it never sees the calls made.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from env0_posttrain.tasks.model import ToolCall
from env0_posttrain.util.digests import sha256_hex

if TYPE_CHECKING:
    from env0_posttrain.tasks.judge import Judge

Params = dict[str, Any]
Sampler = Callable[[random.Random, Any], Params]
Planter = Callable[[Any, Params], None]
Solver = Callable[[Any, Params], list[ToolCall]]
JudgeFn = Callable[["Judge", Params], None]
Answerer = Callable[[Any, Params], str]


def _no_plant(ws: Any, params: Params) -> None:
    """Templates about items the seeded company already holds plant nothing."""


@dataclass(frozen=True)
class Template:
    id: str
    family: str
    phrasings: tuple[str, ...]
    sample: Sampler
    solve: Solver
    judge: JudgeFn
    tools: tuple[str, ...]
    plant: Planter = _no_plant
    distractors: tuple[str, ...] = ()
    starter: bool = False
    answer: Answerer | None = None

    def __post_init__(self) -> None:
        if not self.phrasings:
            raise ValueError(f"template {self.id}: needs at least one phrasing")
        overlap = set(self.tools) & set(self.distractors)
        if overlap:
            raise ValueError(f"template {self.id}: tools listed as both needed and distractor: {sorted(overlap)}")

    def instruction(self, params: Params, phrasing: int) -> str:
        text = self.phrasings[phrasing % len(self.phrasings)]
        try:
            return text.format(**params)
        except KeyError as err:
            raise KeyError(f"template {self.id}: phrasing {phrasing} uses {err} which the sampler did not provide") from None

    def tool_names(self) -> list[str]:
        """Needed tools then distractors, no duplicates, order kept (it is the prompt order)."""
        return list(dict.fromkeys(self.tools + self.distractors))


def params_key(params: Params) -> str:
    """Stable id fragment of a parameter draw: two equal draws are the same task whatever the phrasing."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return sha256_hex(blob, n=10)


class OracleError(RuntimeError):
    """An oracle call was refused by the workspace: the template, not the agent, is wrong."""


TEMPLATES: dict[str, Template] = {}


def register(template: Template) -> Template:
    if template.id in TEMPLATES:
        raise ValueError(f"template id {template.id!r} registered twice")
    TEMPLATES[template.id] = template
    return template
