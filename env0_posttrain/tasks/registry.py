"""The task-set registry: a selection split into train / eval / held-out, with digests and provenance.

Splits are disjoint at three levels, and ``split_overlap`` re-checks them from the tasks themselves
(recomputing every digest) so the blocking asset check does not trust stored labels: no task id,
no content digest and no instruction text in two splits (two tasks the student would read
identically are one task to it), no template shared by train and held-out, and none shared by
train and eval when the selection asks for ``split_by_template``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import Iterator

from pydantic import ValidationError

from env0_posttrain.spec.runspec import TaskSelection
from env0_posttrain.tasks.generator import (
    COMPANY_SEED, GENERATOR_VERSION, code_version, score_task, select_templates, template_stream,
)
from env0_posttrain.tasks.ledger import build_ledger
from env0_posttrain.tasks.model import Split, Task
from env0_posttrain.tasks.taskset import Provenance, TaskSet, said as _said
from env0_posttrain.tasks.template import Template
from env0_posttrain.util.fsutil import atomic_target


def _share(n_items: int, part: int, whole: int) -> int:
    return max(1, round(n_items * part / whole))


def _interleave(templates: list[Template]) -> list[Template]:
    """Alternate families (keeping each family's seeded order), so a small split still spans every family."""
    by_family: dict[str, list[Template]] = {}
    for t in templates:
        by_family.setdefault(t.family, []).append(t)
    queues = [by_family[f] for f in sorted(by_family)]
    out: list[Template] = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _assign_templates(pool: list[Template], sel: TaskSelection, rng: random.Random) -> dict[Split, list[Template]]:
    order = list(pool)
    rng.shuffle(order)
    heldout: list[Template] = []
    if sel.n_heldout:
        k = _share(len(order), sel.n_heldout, sel.n_train + sel.n_eval + sel.n_heldout)
        need = 2 if sel.split_by_template else 1
        if len(order) - k < need:
            raise ValueError(f"{len(order)} templates cannot give held-out templates and still leave {need} for train/eval")
        heldout, order = order[:k], order[k:]
    if sel.split_by_template:
        if len(order) < 2:
            raise ValueError("split_by_template needs at least 2 templates in the selection")
        k = min(_share(len(order), sel.n_eval, sel.n_train + sel.n_eval), len(order) - 1)
        return {"train": _interleave(order[k:]), "eval": _interleave(order[:k]), "heldout": _interleave(heldout)}
    return {"train": _interleave(order), "eval": _interleave(order), "heldout": _interleave(heldout)}


MAX_REPEATS = 25


class _Draw:
    """Shared per-template streams: a task taken by one split is never offered to another."""

    def __init__(self, seed: int, company_seed: int) -> None:
        self.seed, self.company_seed = seed, company_seed
        self.streams: dict[str, Iterator[Task]] = {}
        self.drawn: list[Task] = []
        self.dropped: dict[str, str] = {}
        self.unscored: dict[str, str] = {}  # dropped before scoring: task id -> family
        self.digests: set[str] = set()
        self.instructions: set[str] = set()

    def next(self, template: Template, include_noop_pass: bool) -> Task | None:
        stream = self.streams.setdefault(template.id, template_stream(template, self.seed, self.company_seed, scored=False))
        misses = 0
        for task in stream:
            digest = task.content_digest()
            if digest in self.digests or _said(task) in self.instructions:
                self.dropped[task.id] = "same content or instruction as a task already taken"
                self.unscored.setdefault(task.id, task.family)
                misses += 1
                if misses >= MAX_REPEATS:  # every new draw reads like one already taken: the template is spent
                    self.streams[template.id] = iter(())
                    return None
                continue
            task = score_task(task)
            self.drawn.append(task)
            if (task.oracle_reward or 0.0) < 1.0:
                self.dropped[task.id] = f"oracle reward {task.oracle_reward}"
            elif task.noop_pass and not include_noop_pass:
                self.dropped[task.id] = "doing nothing passes"
            else:
                self.digests.add(digest)
                self.instructions.add(_said(task))
                return task
        return None

    def fill(self, split: str, templates: list[Template], n: int, include_noop_pass: bool) -> list[Task]:
        out: list[Task] = []
        live = list(templates)
        while len(out) < n and live:
            for template in list(live):
                if len(out) >= n:
                    break
                task = self.next(template, include_noop_pass)
                if task is None:
                    live.remove(template)
                else:
                    out.append(task)
        if len(out) < n:
            ids = [t.id for t in templates]
            raise ValueError(f"split {split}: asked for {n} tasks but templates {ids} give only {len(out)} distinct ones")
        return out


def make_task_set(
    selection: TaskSelection, *, company_seed: int = COMPANY_SEED, include_noop_pass: bool = False,
    import_cache: Path | None = None, progress: Callable[[str], None] = lambda _: None, env0_root: Path | None = None,
    env0_now: datetime | None = None,
) -> TaskSet:
    """Draw the selection's train / eval / held-out tasks, deterministic in ``selection.seed``
    (imported from the env0 packages in ``selection.source`` when set, seeded on the env0 checkout ``env0_root``;
    ``import_cache`` keeps those imports; ``env0_now`` pins their seeded clock, else the host's at import)."""
    if selection.source is not None:
        from env0_posttrain.tasks.env0.corpus.importer import source_task_set

        return source_task_set(selection, company_seed=company_seed, include_noop_pass=include_noop_pass,
                               cache_dir=import_cache, progress=progress, env0_root=env0_root, now=env0_now)
    pool = select_templates(selection.families, selection.templates)
    if not pool:
        raise ValueError(f"no template matches families={selection.families} templates={selection.templates}")
    by_split = _assign_templates(pool, selection, random.Random(f"env0-taskset:{selection.seed}"))
    draw = _Draw(selection.seed, company_seed)
    chosen: dict[Split, list[Task]] = {
        "train": draw.fill("train", by_split["train"], selection.n_train, include_noop_pass),
        "eval": draw.fill("eval", by_split["eval"], selection.n_eval, include_noop_pass),
        "heldout": draw.fill("heldout", by_split["heldout"], selection.n_heldout, include_noop_pass),
    }
    tasks = [t for split in ("train", "eval", "heldout") for t in chosen[split]]  # type: ignore[index]
    return TaskSet(
        selection=selection,
        tasks=tasks,
        splits={t.id: split for split, ts in chosen.items() for t in ts},
        digests={t.id: t.content_digest() for t in tasks},
        provenance=Provenance(
            generator_version=GENERATOR_VERSION, code_version=code_version(), seed=selection.seed, company_seed=company_seed
        ),
        ledger=build_ledger(draw.drawn, used=tasks, dropped=draw.dropped, families=draw.unscored),
        dropped=draw.dropped,
    )


def fresh_train_tasks(selection: TaskSelection, n: int, taken: list[Task], *,
                      company_seed: int = COMPANY_SEED) -> list[Task]:
    """`n` new tasks of the selection's training templates for prompts a teacher labels itself (on-policy rounds):
    the selection's own draw continued past its tasks, keeping none whose content digest or instruction text is one
    of `taken` (the run's stored tasks of every split), so no eval or held-out task comes back as a prompt. The
    template assignment is the selection's, so a held-out template never gives one. An env0 corpus has a fixed
    task list and is refused; fewer than `n` left in the templates is refused, saying how many there are."""
    if selection.source is not None:
        raise ValueError("fresh tasks are drawn from the generator's templates; tasks.source imports a fixed list "
                         "of env0 packages, which has none beyond the run's own")
    if n <= 0:
        return []
    pool = select_templates(selection.families, selection.templates)
    by_split = _assign_templates(pool, selection, random.Random(f"env0-taskset:{selection.seed}"))
    digests = {t.content_digest() for t in taken}
    said = {_said(t) for t in taken}
    draw = _Draw(selection.seed, company_seed)
    try:
        drawn = draw.fill("train", by_split["train"], len(taken) + n, include_noop_pass=False)
    except ValueError as err:
        raise ValueError(f"{n} fresh tasks asked for beyond the run's {len(taken)}: {err}") from None
    fresh = [t for t in drawn if t.content_digest() not in digests and _said(t) not in said][:n]
    if len(fresh) < n:
        raise ValueError(f"the run's training templates give {len(fresh)} tasks beyond its own {len(taken)}; "
                         f"{n} fresh tasks were asked for")
    return fresh


def split_overlap(task_set: TaskSet) -> list[str]:
    """Every contamination problem in the set; empty means the splits are clean (the blocking check)."""
    problems: list[str] = []
    counts = Counter(t.id for t in task_set.tasks)
    problems += [f"task id {tid} appears {n} times in the set" for tid, n in sorted(counts.items()) if n > 1]
    by_split: dict[str, list[Task]] = {"train": [], "eval": [], "heldout": []}
    for task in task_set.tasks:
        split = task_set.splits.get(task.id)
        if split not in by_split:
            problems.append(f"task {task.id} has no split label")
            continue
        by_split[split].append(task)
        stored = task_set.digests.get(task.id)
        if stored != task.content_digest():
            problems.append(f"task {task.id}: stored digest {stored} does not match its content {task.content_digest()}")
    template_pairs = {("train", "heldout")}
    if task_set.selection.split_by_template:
        template_pairs.add(("train", "eval"))
    for a, b in combinations(("train", "eval", "heldout"), 2):
        for what, key in (("task id", lambda t: t.id), ("content digest", lambda t: t.content_digest()),
                          ("instruction", _said), ("template", lambda t: t.template_id)):
            if what == "template" and (a, b) not in template_pairs:
                continue
            if what == "instruction" and task_set.selection.source is not None:
                continue  # env0 packages sharing a wording are distinct tasks; the report's ledger counts them
            shared = sorted({key(t) for t in by_split[a]} & {key(t) for t in by_split[b]})
            problems += [f"{a} and {b} share {what} {v}" for v in shared]
    return problems


def write_tasks_jsonl(task_set: TaskSet, path: Path) -> Path:
    """One row per task: {"split", "content_digest", "task"}; written atomically (tmp + rename)."""
    path = Path(path)
    with atomic_target(path) as tmp, tmp.open("w") as f:
        for task in task_set.tasks:
            row = {"split": task_set.splits[task.id], "content_digest": task_set.digests[task.id],
                   "task": task.model_dump(mode="json")}
            f.write(json.dumps(row, sort_keys=True) + "\n")
    return path


def read_tasks_jsonl(path: Path) -> list[tuple[Split, Task]]:
    """Rows written by ``write_tasks_jsonl``; a bad row is refused naming the file, the row and the field."""
    out: list[tuple[Split, Task]] = []
    for n, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            task = Task.model_validate(row["task"])
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: row {n}: not valid JSON ({err.msg})") from None
        except KeyError as err:
            raise ValueError(f"{path}: row {n}: missing field {err}") from None
        except ValidationError as err:
            fields = "; ".join(f"task.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors())
            raise ValueError(f"{path}: row {n}: {fields}") from None
        if row.get("split") not in ("train", "eval", "heldout"):
            raise ValueError(f"{path}: row {n}: field split must be train, eval or heldout, got {row.get('split')!r}")
        if row.get("content_digest") != task.content_digest():
            raise ValueError(f"{path}: row {n}: field content_digest does not match the task's content")
        out.append((row["split"], task))
    return out
