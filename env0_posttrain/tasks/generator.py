"""Deterministic task generation, workspace building, verification and the generation-time check.

Every template draws from its own random stream (seeded by the run seed and the template id),
so adding a template never changes the tasks of another, and the same seed always yields the
same tasks, byte for byte. Each task is checked as it is made: the oracle must reach reward 1
and doing nothing must not (or the task is labelled ``noop_pass``).
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator

from env0_posttrain.tasks.model import Task, ToolCall, VerifierResult, StateRecipe
from env0_posttrain.tasks.sources import plant_task, source_of
from env0_posttrain.tasks.task_paths import NO_PATHS, TaskPaths
from env0_posttrain.tasks.template import TEMPLATES, OracleError, Template, params_key
from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain.util.digests import files_digest

GENERATOR_VERSION = "env0-tasks/1"
COMPANY_SEED = 0
"""One company for every task by default: people, channels and labels then form the closed
vocabulary a tiny student can learn, and eval tasks are unseen combinations of seen entities."""


def code_version() -> str:
    """Hash of the task and workspace sources: any change to how tasks are made changes it."""
    root = Path(__file__).resolve().parent.parent
    sources = (path for pkg in ("tasks", "workspace") for path in sorted((root / pkg).rglob("*.py")))
    return files_digest(sources, root, salt=GENERATOR_VERSION)


@lru_cache(maxsize=4)
def _company(seed: int) -> Workspace:
    return Workspace.seeded(seed)


def company(seed: int = COMPANY_SEED) -> Workspace:
    """The seeded company before any task items are planted (shared and cached: treat as read-only)."""
    return _company(seed)


def build_workspace(task: Task, paths: TaskPaths = NO_PATHS) -> Workspace:
    """The task's initial workspace, clock frozen, as its source builds it (`paths`: where an env0 task's package
    and the env0 checkout are)."""
    return source_of(task).build(task, paths)


def verify(task: Task, start: Workspace, end: Workspace, final_answer: str | None,
           paths: TaskPaths = NO_PATHS) -> VerifierResult:
    """Judge the end state (and answer) against the start state; the path taken is never looked at."""
    return source_of(task).verify(task, start, end, final_answer, paths)


def play(ws: Workspace, calls: Iterable[ToolCall]) -> list[dict[str, Any]]:
    """Run tool calls in order; an oracle call the workspace refuses is a template bug."""
    results = []
    for i, call in enumerate(calls):
        out = call_tool(ws, call.name, call.arguments)
        if not out.get("ok"):
            raise OracleError(f"call {i} {call.name}({call.arguments}) refused: {out.get('error')}")
        results.append(out)
    return results


def score_task(task: Task) -> Task:
    """Record the oracle's and the no-op's rewards on the task (the generation-time check)."""
    start = build_workspace(task)
    end = build_workspace(task)
    play(end, task.oracle)
    oracle = verify(task, start, end, task.final_answer)
    noop = verify(task, start, build_workspace(task), None)
    return task.model_copy(
        update={"oracle_reward": oracle.reward, "noop_reward": noop.reward, "noop_pass": noop.reward >= 1.0}
    )


def make_task(template: Template, params: dict[str, Any], phrasing: int, company_seed: int = COMPANY_SEED) -> Task:
    def planted() -> Workspace:
        return plant_task(Workspace.seeded(company_seed), template, params)

    answer = template.answer(planted(), params) if template.answer else None
    oracle = template.solve(planted(), params)
    if not oracle:
        raise ValueError(f"template {template.id}: the oracle made no tool call")
    return Task(
        id=f"{template.id}-{params_key(params)}",
        family=template.family,
        template_id=template.id,
        difficulty=len(oracle),
        instruction=template.instruction(params, phrasing),
        recipe=StateRecipe(seed=company_seed, items=params),
        oracle=oracle,
        final_answer=answer,
        tools=template.tool_names(),
    )


def template_stream(
    template: Template, seed: int, company_seed: int = COMPANY_SEED, max_misses: int = 200, scored: bool = True
) -> Iterator[Task]:
    """Distinct tasks of one template, in a fixed order for a given seed; scored unless ``scored=False``
    (the registry scores only the tasks it keeps).

    A draw equal to an earlier one (same params) is skipped; the stream ends after
    ``max_misses`` draws in a row add nothing new (the template's parameter space is spent).
    """
    rng = random.Random(f"env0-tasks:{seed}:{template.id}")
    base = company(company_seed)
    seen: set[str] = set()
    misses = 0
    while misses < max_misses:
        params = template.sample(rng, base)
        phrasing = rng.randrange(len(template.phrasings))
        key = params_key(params)
        if key in seen:
            misses += 1
            continue
        misses = 0
        seen.add(key)
        task = make_task(template, params, phrasing, company_seed)
        yield score_task(task) if scored else task


def select_templates(families: Iterable[str] | None = None, templates: Iterable[str] | None = None) -> list[Template]:
    """Templates by id (all must exist) and/or family, sorted by id."""
    fams = set(families) if families is not None else None
    if templates is not None:
        unknown = sorted(set(templates) - set(TEMPLATES))
        if unknown:
            raise KeyError(f"unknown template ids {unknown}")
        chosen = [TEMPLATES[t] for t in templates]
    else:
        chosen = list(TEMPLATES.values())
    if fams is not None:
        chosen = [t for t in chosen if t.family in fams]
    return sorted(chosen, key=lambda t: t.id)


def starter_templates(max_calls: int | None = None) -> list[Template]:
    """Closed-vocabulary templates (difficulty 1-2) a tiny student can learn in CPU minutes.

    ``max_calls=1`` keeps those solved by one call whose arguments all come from the instruction's
    closed vocabulary; the two-call ones also need an id read back from the first call's result.
    """
    chosen = [t for t in select_templates() if t.starter]
    if max_calls is not None:
        chosen = [t for t in chosen if next(template_stream(t, 0)).difficulty <= max_calls]
    return chosen


def starter_template_ids(max_calls: int | None = None) -> list[str]:
    return [t.id for t in starter_templates(max_calls)]


def generate_tasks(
    seed: int = 0,
    *,
    families: Iterable[str] | None = None,
    templates: Iterable[str] | None = None,
    per_template: int = 10,
    company_seed: int = COMPANY_SEED,
) -> list[Task]:
    """Up to ``per_template`` scored tasks from each selected template, deterministic in ``seed``."""
    out: list[Task] = []
    for template in select_templates(families, templates):
        out.extend(islice(template_stream(template, seed, company_seed), per_template))
    return out
