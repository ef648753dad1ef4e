"""A named eval suite's tasks (spec/suites.py SuiteSpec) and its boundary with the training set.

Suites draw from the seen training tasks, the built-in generator or a folder of env0 packages. Within a suite,
distinct packages are distinct tasks (two packages sharing an instruction but not their content both stay); only
identical content is dropped. What a suite shares with the training set (task ids, package names, content,
instructions, templates, families) is measured, never hidden: the report prints it as the suite's ledger.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from env0_posttrain.spec.suites import SuiteSpec
from env0_posttrain.tasks.model import Task
from env0_posttrain.tasks.registry import _said

Progress = Callable[[str], None]


@dataclass
class SuiteTasks:
    name: str
    kind: str
    tasks: list[Task]
    dropped: dict[str, str] = field(default_factory=dict)
    considered: int = 0


def package_name(task: Task) -> str | None:
    """The package folder's name of an imported env0 task (the seeds' task id), None for a generated task."""
    from env0_posttrain.tasks.sources import source_of

    return source_of(task).package_name(task)


def _excluded(suite: SuiteSpec, train: list[Task]) -> set[str]:
    out = set(suite.exclude)
    if suite.exclude_train:
        out |= {t.id for t in train} | {n for n in map(package_name, train) if n}
    return out


def build_suite(suite: SuiteSpec, *, train: list[Task], families: list[str], templates: list[str] | None,
                source: Path | None, anchor: Path | None, cache_dir: Path | None,
                progress: Progress = lambda _: None, env0_root: Path | None = None,
                now: datetime | None = None) -> SuiteTasks:
    """The suite's tasks, deterministic in its seed; `anchor` is the folder env0 package paths are stored against,
    `env0_root` the env0 checkout their imports are seeded on."""
    rng = random.Random(f"env0-suite:{suite.name}:{suite.seed}")
    if suite.kind == "seen":
        tasks = [t for t in train if suite.families is None or t.family in suite.families]
        if suite.sample is not None:
            if suite.sample > len(tasks):
                raise ValueError(f"suite {suite.name}: sample {suite.sample} but the training set has {len(tasks)}")
            tasks = rng.sample(tasks, suite.sample)
        return SuiteTasks(suite.name, suite.kind, tasks, considered=len(train))
    if suite.kind == "generated":
        return _generated(suite, train, suite.families or families, templates if suite.families is None else None)
    assert source is not None and anchor is not None
    return _packages(suite, train, source, anchor, cache_dir, rng, progress, env0_root, now)


def _generated(suite: SuiteSpec, train: list[Task], families: list[str], templates: list[str] | None) -> SuiteTasks:
    from env0_posttrain.tasks.generator import COMPANY_SEED, select_templates
    from env0_posttrain.tasks.registry import _Draw, _interleave

    pool = select_templates(families, templates)
    if not pool:
        raise ValueError(f"suite {suite.name}: no built-in template matches families {families}")
    draw = _Draw(suite.seed, COMPANY_SEED)
    if suite.exclude_train:  # the generator's streams then skip every training task, as the splits skip each other
        draw.digests |= {t.content_digest() for t in train}
        draw.instructions |= {_said(t) for t in train}
    assert suite.sample is not None
    tasks = draw.fill(f"suite {suite.name}", _interleave(pool), suite.sample, include_noop_pass=False)
    excluded = set(suite.exclude)
    kept = [t for t in tasks if t.id not in excluded]
    return SuiteTasks(suite.name, suite.kind, kept, dict(draw.dropped), considered=len(draw.drawn))


def _packages(suite: SuiteSpec, train: list[Task], source: Path, anchor: Path, cache_dir: Path | None,
              rng: random.Random, progress: Progress, env0_root: Path | None, now: datetime | None) -> SuiteTasks:
    from env0_posttrain.tasks.env0.corpus.importer import family_of, import_cached, package_dirs
    from env0_posttrain.tasks.env0.package.load import Env0Error, load_package

    if not source.is_dir():
        raise ValueError(f"suite {suite.name}: source {source} is not a directory")
    order = package_dirs(source)
    if not order:
        raise ValueError(f"suite {suite.name}: no env0 package (a folder with task.toml or task.md) in {source}")
    rng.shuffle(order)
    excluded = _excluded(suite, train)
    want = suite.sample or len(order)
    kept: list[Task] = []
    dropped: dict[str, str] = {}
    digests: set[str] = set()
    considered = 0
    for root in order:
        if len(kept) >= want:
            break
        if root.name in excluded:
            dropped[root.name] = "excluded (a training package or listed in exclude)"
            continue
        considered += 1
        try:
            if suite.families is not None and family_of(load_package(root).services) not in suite.families:
                dropped[root.name] = f"family not in suites.{suite.name}.families"
                continue
            task = import_cached(root, source, anchor, cache_dir, env0_root=env0_root, now=now)
        except Env0Error as e:
            dropped[root.name] = str(e)
            continue
        progress(f"suite {suite.name}: {considered} packages read, {len(kept)} of {want} kept")
        if task.id in excluded:
            dropped[task.id] = "excluded (a training task id or listed in exclude)"
        elif (task.oracle_reward or 0.0) < 1.0:
            dropped[task.id] = f"the replayed oracle scores {task.oracle_reward} under the package's verifier"
        elif task.noop_pass:
            dropped[task.id] = "doing nothing passes"
        elif _pkg_sha(task) in digests:
            dropped[task.id] = "same files as a package already taken"
        else:
            kept.append(task)
            digests.add(_pkg_sha(task))
    if suite.sample is not None and len(kept) < suite.sample:
        why = "; ".join(f"{k}: {v}" for k, v in list(dropped.items())[:8])
        raise ValueError(f"suite {suite.name}: asked for {suite.sample} tasks but {source} gives {len(kept)} usable "
                         f"ones of {len(order)} packages (dropped: {why})")
    return SuiteTasks(suite.name, suite.kind, kept, dropped, considered)


def _pkg_sha(task: Task) -> str:
    return str(task.recipe.items.get("sha256") or task.content_digest())


def boundary(kind: str, train: list[Task], tasks: list[Task], dropped: int = 0, considered: int = 0) -> dict:
    """What a suite shares with the training set: exact task ids (the seeds' check), package names, package
    content, instructions, templates and families; `seen` says which of seen / partly seen / unseen it is."""
    ids = {t.id for t in train}
    names = {n for n in map(package_name, train) if n}
    content = {_pkg_sha(t) for t in train}
    said = {_said(t) for t in train}
    id_overlap = sum(t.id in ids for t in tasks)
    shared = {
        "task_id_overlap": id_overlap,
        "package_name_overlap": sum(package_name(t) in names for t in tasks if package_name(t)),
        "content_overlap": sum(_pkg_sha(t) in content for t in tasks),
        "instruction_overlap": sum(_said(t) in said for t in tasks),
    }
    templates = sorted({t.template_id for t in tasks} & {t.template_id for t in train})
    families = sorted({t.family for t in tasks} & {t.family for t in train})
    n = len(tasks)
    if kind == "seen" or (n and max(shared.values()) == n):
        seen = "seen"
    elif any(shared.values()):
        seen = "partly seen"
    else:
        seen = "unseen"
    return {"kind": kind, "tasks": n, "seen": seen, **shared, "shared_templates": templates,
            "shared_families": families, "considered": considered, "dropped": dropped}
