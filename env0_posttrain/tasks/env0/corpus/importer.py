"""A folder of env0 packages as a run's task set (`tasks.source`): one Task per package, split train / eval.

Importing a package runs its solve.sh once against our server and records the API calls it made as the task's
oracle (tool calls by our tool names), so the offline oracle teacher replays them in-process through the normal
agent loop. The import then scores the task as the generator does: the replayed oracle must reach reward 1 under
the package's own verifier, and doing nothing must not. Packages are taken in an order seeded by `tasks.seed`
until n_train + n_eval are kept, so a 2,000-package corpus costs only the packages a run needs; imports are
cached by (package hash, seed, code version) so a re-materialized task set is the same, byte for byte.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

from ....spec.runspec import TaskSelection
from ....workspace.services import registry
from ....workspace.tools import TOOLS
from ...generator import COMPANY_SEED, code_version
from ...ledger import build_ledger
from ...model import StateRecipe, Task, ToolCall
from ...taskset import Provenance, TaskSet
from ....sandbox.box import SandboxUnavailable
from ..judge.verifier import TEMPLATE_ID, score_env0
from ..package.files import package_sha256
from ..package.load import Env0Error, Env0Package, load_package
from ..run.scripts import run_script, sandbox
from ..seed.start import seeded
from ..serve.recording import oracle_calls

from env0_posttrain.util.fsutil import atomic_write_text

IMPORTER_VERSION = "env0-packages/1"


def family_of(services: tuple[str, ...]) -> str:
    """The family of the one service left when those another declared service subsumes are set aside (each env0
    face's `subsumes`: Docs live in Drive, so drive + docs is docs; the auth service with the apps it guards is
    auth, as the seeds' corpus counts them); that service's `family`, else (Slack, Stripe, several) multi-app."""
    faces = {svc: registry.get(svc).env0 for svc in services}
    rest = set(services) - {s for face in faces.values() if face for s in face.subsumes}
    face = faces[rest.pop()] if len(rest) == 1 else None
    return (face.family if face else None) or "multi-app"


def tools_for(services: tuple[str, ...], oracle: list[ToolCall]) -> list[str]:
    """Every tool of the declared services, plus any the oracle used beyond them (Docs comments are Drive's)."""
    used = {c.name for c in oracle}
    return [name for name, spec in TOOLS.items() if spec.service in services or name in used]


def record_oracle(pkg: Env0Package, sha: str, seed: int, now: str, env0_root: Path | None) -> list[ToolCall]:
    """Run solution/solve.sh once against our server, recording its requests at the HTTP layer (serve/recording.py);
    the oracle is every tool call they made, in order, refused ones included (env0's action log has them)."""
    start = seeded(pkg, sha, seed, now, env0_root)
    try:
        with sandbox(pkg, start) as sb:
            run_script("run solution/solve.sh", sb, pkg.solve_sh, pkg.agent_timeout_s)
            requests = list(sb.surface.requests)
    except SandboxUnavailable as e:
        raise Env0Error("lay out sandbox", pkg.root, str(e)) from None
    calls = oracle_calls(requests)
    if not any(r.calls and any(c.ok for c in r.calls) for r in requests):
        raise Env0Error("record oracle", pkg.solve_sh, "solve.sh made no successful API call")
    return calls


def import_package(root: Path, source: Path, seed: int = COMPANY_SEED, now: datetime | None = None,
                   env0_root: Path | None = None) -> Task:
    """One package as a scored Task; raises Env0Error naming the file and the step. `env0_root`: the env0 checkout
    its needles and the default fills read (None: our own seeded company only)."""
    pkg = load_package(root)
    sha = package_sha256(pkg.root)
    stamp = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat()  # solve.sh reads the wall clock
    oracle = record_oracle(pkg, sha, seed, stamp, env0_root)
    rel = _relative(Path(root), Path(source))
    task = Task(id=f"env0-{re.sub(r'[^A-Za-z0-9._-]+', '-', rel)}-{sha[:8]}", family=family_of(pkg.services),
                template_id=TEMPLATE_ID, difficulty=len(oracle), instruction=pkg.instruction,
                recipe=StateRecipe(seed=seed, items={"package": rel, "sha256": sha, "now": stamp}),
                oracle=oracle, tools=tools_for(pkg.services, oracle))
    return score_env0(task, pkg, env0_root)


def _relative(root: Path, source: Path) -> str:
    """The package's path inside its folder, read from the listing (not resolved: a symlinked package is where it
    is listed, not where its files live)."""
    for a, b in ((root.absolute(), source.absolute()), (root.resolve(), source.resolve())):
        if a.is_relative_to(b):
            return a.relative_to(b).as_posix()
    raise Env0Error("import package", root, f"not inside the folder {source} it was listed in")


def package_dirs(source: Path) -> list[Path]:
    """The packages in a folder: its sub-folders with a task.toml or task.md (others, e.g. _manifests, are not)."""
    return sorted(d for d in source.iterdir() if d.is_dir() and ((d / "task.toml").is_file() or (d / "task.md").is_file()))


def anchored(path: Path, anchor: Path) -> str:
    """A package folder as stored in a task recipe: relative to the run's anchor folder (its tasks.source or the
    first package suite's folder), `..` allowed, so a moved env0 checkout keeps every task's hash."""
    return Path(os.path.relpath(Path(path).absolute(), Path(anchor).resolve())).as_posix()


def import_cached(root: Path, source: Path, anchor: Path, cache_dir: Path | None, seed: int = COMPANY_SEED,
                  env0_root: Path | None = None, now: datetime | None = None) -> Task:
    """`import_package` through a cache keyed by the package's name and content hash, the seed, the pinned clock
    (`now`, the run spec's env0.clock; None: the host's clock at the first import) and the code version (so it may be
    shared by every run of a data dir); the recipe names the package relative to `anchor`, the folder the run's
    verifier resolves packages against."""
    if cache_dir is None:
        task = import_package(root, source, seed, now, env0_root=env0_root)
    else:
        at = f"-at{int(now.timestamp())}" if now is not None else ""
        key = (f"{re.sub(r'[^A-Za-z0-9._-]+', '-', root.name)}-{package_sha256(root)[:16]}-s{seed}{at}-"
               f"{code_version()}.json")
        path = Path(cache_dir) / key
        if path.is_file():
            task = Task.model_validate_json(path.read_text())
        else:
            task = import_package(root, source, seed, now, env0_root=env0_root)
            atomic_write_text(path, task.model_dump_json())
    items = dict(task.recipe.items) | {"package": anchored(root, anchor)}
    return task.model_copy(update={"recipe": task.recipe.model_copy(update={"items": items})})


def source_task_set(selection: TaskSelection, *, company_seed: int = COMPANY_SEED, include_noop_pass: bool = False,
                    cache_dir: Path | None = None, progress: Callable[[str], None] = lambda _: None,
                    env0_root: Path | None = None, now: datetime | None = None) -> TaskSet:
    """Import the selection's packages in a seeded order until n_train + n_eval distinct ones pass the check.

    Distinct packages are distinct tasks, even when two share an instruction (env0 packages differ in company,
    needles and oracle behind one wording): only identical package files are dropped. The eval split takes
    each family's share of the kept tasks (stratified), so a small eval split is not missing a family."""
    assert selection.source is not None
    source = Path(selection.source).resolve()
    if not source.is_dir():
        raise ValueError(f"tasks.source {source}: not a directory")
    order = package_dirs(source)
    if not order:
        raise ValueError(f"tasks.source {source}: no env0 package (a folder with task.toml or task.md) in it")
    random.Random(f"env0-taskset:{selection.seed}").shuffle(order)
    need = selection.n_train + selection.n_eval
    if len(order) < need:  # before minutes of importing
        raise ValueError(f"tasks.source {source}: asked for {need} tasks (n_train + n_eval) but the folder holds "
                         f"only {len(order)} packages")
    kept: list[Task] = []
    drawn: list[Task] = []
    dropped: dict[str, str] = {}
    files: set[str] = set()
    jobs = max(1, os.cpu_count() or 1)  # each import runs in its own sandbox: a window of them at once

    unscored: dict[str, str] = {}  # package -> its family, when it was read but never scored

    def attempt(root: Path) -> Task | tuple[str | None, str]:
        family = None
        try:
            family = family_of(load_package(root).services)
            if family not in selection.families:
                return family, f"family {family} is not in tasks.families"
            return import_cached(root, source, source, cache_dir, company_seed, env0_root, now)
        except Env0Error as e:
            return family, str(e)

    # taken in the seeded order, so the set is the one a sequential import gives (a window may import a few more,
    # which land in the cache only)
    with ThreadPoolExecutor(jobs, thread_name_prefix="env0-import") as pool:
        windows = (order[i:i + jobs] for i in range(0, len(order), jobs))
        outcomes = ((root, got) for w in windows if len(kept) < need for root, got in zip(w, pool.map(attempt, w)))
        for i, (root, task) in enumerate(outcomes):
            if len(kept) >= need:
                break
            if i % 10 == 0:
                progress(f"tasks.source: {i} of {len(order)} packages read, {len(kept)} of {need} kept, "
                         f"{len(dropped)} dropped")
            if isinstance(task, tuple):
                name = root.relative_to(source).as_posix()
                dropped[name] = task[1]
                if task[0] is not None:
                    unscored[name] = task[0]
                continue
            drawn.append(task)
            if (task.oracle_reward or 0.0) < 1.0:
                dropped[task.id] = f"the replayed oracle scores {task.oracle_reward} under the package's verifier"
            elif task.noop_pass and not include_noop_pass:
                dropped[task.id] = "doing nothing passes"
            elif task.recipe.items["sha256"] in files:
                dropped[task.id] = "same package files as a task already taken"
            else:
                kept.append(task)
                files.add(task.recipe.items["sha256"])
    if len(kept) < need:
        reasons: dict[str, int] = {}
        for why in dropped.values():
            key = why.split(":")[0][:80]
            reasons[key] = reasons.get(key, 0) + 1
        why = "; ".join(f"{n} x {k}" for k, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
        raise ValueError(f"tasks.source {source}: asked for {need} tasks (n_train + n_eval) but {len(order)} packages "
                         f"give {len(kept)} usable ones" + (f" (dropped: {why})" if why else ""))
    splits = stratified_splits(kept, selection.n_eval)
    return TaskSet(
        selection=selection, tasks=kept, splits=splits, digests={t.id: t.content_digest() for t in kept},
        provenance=Provenance(generator_version=IMPORTER_VERSION, code_version=code_version(), seed=selection.seed,
                              company_seed=company_seed),
        ledger=build_ledger(drawn, used=kept, dropped=dropped, families=unscored), dropped=dropped,
    )


def stratified_splits(kept: list[Task], n_eval: int) -> dict[str, str]:
    """Each family's share of n_eval (largest remainders) goes to eval, the last ones of the family in the seeded
    order; the rest is train."""
    by_family: dict[str, list[Task]] = {}
    for t in kept:
        by_family.setdefault(t.family, []).append(t)
    quota = {f: n_eval * len(ts) / len(kept) for f, ts in by_family.items()}
    take = {f: int(q) for f, q in quota.items()}
    for f in sorted(quota, key=lambda f: (-(quota[f] - take[f]), f))[: n_eval - sum(take.values())]:
        take[f] += 1
    evals = {t.id for f, ts in by_family.items() for t in ts[len(ts) - take[f]:]} if n_eval else set()
    return {t.id: "eval" if t.id in evals else "train" for t in kept}
