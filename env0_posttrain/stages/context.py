"""What every stage of a run shares: its context (run id, spec, store, paths, log), what a stage returns
(metadata, a content-hash data version, check outcomes) and the hashes that name code and content.

The stages themselves are plain Python with no Dagster in sight: each reads its inputs from the store by
run id, writes its outputs to the store and to `data/artifacts/<run_id>/`, and returns a StageResult that
`defs/` turns into a MaterializeResult, so tests run a stage without an instance.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from env0_posttrain.util.digests import canonical_json, files_digest, sha256_hex
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, load_run_spec
from env0_posttrain.store import Store
from env0_posttrain.util.torch_threads import use_run_threads

if TYPE_CHECKING:
    from env0_posttrain.tasks.task_paths import TaskPaths

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
MAX_OVERLENGTH_FRACTION = 0.1  # declared drops are counted; more than this many means the seq length is wrong


@dataclass
class CheckOutcome:
    """One check's verdict. `passed=None`: the check does not apply to this run and verified nothing; it yields no
    result, so Dagster shows it Skipped instead of a green pass (`description` says why)."""

    name: str
    passed: bool | None
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class StageResult:
    metadata: dict[str, Any]
    data_version: str
    checks: list[CheckOutcome] = field(default_factory=list)
    markdown: dict[str, str] = field(default_factory=dict)


def not_applicable(section: str, what: str, checks: tuple[str, ...] = ()) -> StageResult:
    """An optional stage launched by hand for a run whose spec lacks its section (the project leaves such assets out
    of its runs: spec/optional_stages.py): recorded as not applying, its checks without a verdict (Skipped, not
    Passed)."""
    note = f"does not apply: the run spec has no {section} section, so there is no {what}"
    return StageResult(metadata={"skipped": True, "applies": False, "reason": note},
                       data_version=content_hash("skipped", what), checks=[CheckOutcome(c, None, note) for c in checks])


@dataclass
class StageContext:
    run_id: str
    spec: RunSpec
    store: Store
    paths: Paths
    log: logging.Logger
    # Rounds that finished at or after this time are this materialization's own work, finished by another
    # process meanwhile (a retry of a killed run, after a manual relaunch): reused, never played again.
    reuse_since: float | None = None
    # Arms whose finished round is collected again on purpose (`run materialize --recollect-teacher`).
    recollect: frozenset[str] = frozenset()

    @classmethod
    def load(cls, run_id: str, paths: Paths, log: logging.Logger | None = None, *, reuse_since: float | None = None,
             recollect: frozenset[str] = frozenset()) -> "StageContext":
        spec = load_run_spec(paths, run_id)
        use_run_threads(spec.torch_threads)
        store = Store(paths.db)
        store.upsert_run(spec)
        return cls(run_id, spec, store, paths, log or logging.getLogger("env0_posttrain"), reuse_since, recollect)

    @property
    def task_paths(self) -> "TaskPaths":
        """Where this run's env0 packages and checkout are: handed to whatever builds, judges or sandboxes a task."""
        return task_paths(self.spec)

    def task_env(self) -> Any:
        """The harness's environment for this run's tasks (it travels to the rollout workers with their jobs)."""
        from env0_posttrain.agent.environment import WorkspaceEnv

        return WorkspaceEnv(self.task_paths)

    def artifacts(self, *parts: str) -> Path:
        p = self.paths.artifacts(self.run_id).joinpath(*parts)
        p.mkdir(parents=True, exist_ok=True)
        return p


@cache
def code_version(*packages: str) -> str:
    """Hash of the packages' source: the UI marks an asset stale when the code that makes it changes."""
    return files_digest((f for pkg in packages for f in sorted((PACKAGE_ROOT / pkg).rglob("*.py"))), PACKAGE_ROOT)


def content_hash(*parts: Any) -> str:
    return sha256_hex(*map(canonical_json, parts), n=16)


def load_tasks(ctx: StageContext, splits: tuple[str, ...], required: bool = True) -> list:
    from env0_posttrain.tasks.model import Task

    tasks = []
    for split in splits:
        tasks += [Task.model_validate_json(j) for _, j in ctx.store.load_tasks(ctx.run_id, split)]
    if required and not tasks:
        raise RuntimeError(f"run {ctx.run_id}: no {'/'.join(splits)} tasks in the store; materialize task_set first")
    return tasks


def anchor_source(spec: RunSpec) -> Path | None:
    """The folder env0 tasks name their package against: tasks.source, else the first packages suite's folder."""
    from env0_posttrain.spec.suites import resolve

    if spec.tasks.source is not None:
        return resolve(spec, spec.tasks.source)
    return next((resolve(spec, s.source) for s in spec.suites if s.source is not None), None)


def env0_root(spec: RunSpec) -> Path | None:
    """The env0 checkout a run reads: env0.root, else the user's ENV0_ROOT (read, never written)."""
    root = spec.env0.root if spec.env0.root is not None else os.environ.get("ENV0_ROOT") or None
    return Path(root).expanduser().resolve() if root is not None else None


def task_paths(spec: RunSpec) -> "TaskPaths":
    """The spec's env0 checkout and package folder, as the value every stage passes down (never the process's
    environment: a long-lived process runs stages of several runs, and one run's checkout must not reach the next)."""
    from env0_posttrain.tasks.task_paths import TaskPaths

    return TaskPaths(env0_root=env0_root(spec), packages=anchor_source(spec))


def eval_splits(ctx: StageContext) -> tuple[str, ...]:
    """The splits every eval arm and the report read: eval, plus heldout when the spec asks for one."""
    return ("eval", "heldout") if ctx.spec.tasks.n_heldout else ("eval",)
