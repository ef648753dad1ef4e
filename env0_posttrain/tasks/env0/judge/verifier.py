"""An imported env0 package as a harness task: its start workspace, and its own verifier as the judge.

A task of template "env0" names its package by a path relative to the run's `tasks.source` folder (so a
moved corpus keeps its content hashes); the caller says where that folder is (`TaskPaths.packages`), and where the
env0 checkout is (`TaskPaths.env0_root`). The verifier serves the end workspace with the start
workspace as env0's diff baseline and the agent's calls as env0's action log, and runs `tests/test.sh` unchanged.
Each verifier run has its own sandbox (private /tmp and ports), so episodes are judged in parallel.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ....workspace.environment import Workspace
from ....workspace.tools import TOOLS
from ...model import Task, VerifierResult
from ...task_paths import TaskPaths
from ..package.load import Env0Error, Env0Package, load_package
from ..package.files import package_sha256
from ..serve.recording import RecordedRequest, oracle_calls
from ..run.runner import Env0Result, Start, seeded_start, verify
from ....sandbox.box import Sandbox, SandboxUnavailable
from ..serve.server import log_entry
from ..services import PREFIXES
from ..serve.shapes import STATE

TEMPLATE_ID = "env0"
_SEEDING = threading.Lock()  # the cached starts are shared; builds run on the loop, verifiers in threads


def package_of(task: Task, paths: TaskPaths) -> Env0Package:
    """The task's package, refusing one whose files changed since the task was imported (its oracle would be stale)."""
    items = task.recipe.items
    root = paths.package_dir(task)
    sha = package_sha256(root) if root.is_dir() else None
    if sha != items["sha256"]:
        raise Env0Error("check package", root, f"task {task.id} was imported from package hash {items['sha256'][:12]}, "
                        f"the folder now hashes to {sha[:12] if sha else '(missing)'}; import the task set again")
    return load_package(root)


@lru_cache(maxsize=64)
def _seeded(root: str, sha: str, seed: int, now: str, env0_root: Path | None) -> Start:
    return seeded_start(load_package(root), seed, datetime.fromisoformat(now), env0_root)


def seeded(pkg: Env0Package, sha: str, seed: int, now: str, env0_root: Path | None) -> Start:
    """(a fresh fork of the seeded workspace, the needle manifest, what the server needs beyond the rows);
    `env0_root`: the env0 checkout the needles and the default fills read (None: our own company only)."""
    with _SEEDING:  # the cached start is shared: seeded and forked one thread at a time
        ws, manifest, extras = _seeded(str(pkg.root), sha, seed, now, env0_root)
        return Start(ws.fork(), manifest, extras)


def task_start(task: Task, paths: TaskPaths) -> tuple[Env0Package, Start]:
    """The task's package and its seeded start."""
    pkg = package_of(task, paths)
    items = task.recipe.items
    return pkg, seeded(pkg, items["sha256"], task.recipe.seed, items["now"], paths.env0_root)


def action_log(ws: Workspace) -> dict[str, list[dict[str, Any]]]:
    """The workspace's calls since its start, as env0's per-service action logs (the HTTP requests they stand for)."""
    out: dict[str, list[dict[str, Any]]] = {p: [] for p in PREFIXES}
    for entry in ws.action_log:
        spec = TOOLS.get(entry["tool"])
        logged = log_entry(spec, entry["args"], spec.status if entry["ok"] else entry.get("status", 400)) if spec else None
        if logged is not None:
            out[logged[0]].append(logged[1])
    return out


def run_verifier(pkg: Env0Package, start: Workspace, end: Workspace, manifest: dict[str, Any],
                 extras: dict[str, Any], log: dict[str, list[dict[str, Any]]] | None = None) -> tuple[float, dict]:
    """Serve `end` with `start` as the diff baseline, run tests/test.sh unchanged, return (reward, reward.json)."""
    try:
        with Sandbox(end, package_dir=pkg.root, manifest=manifest, extras=extras) as sb:
            sb.surface.initial = {svc: STATE[svc](start) for svc in set(PREFIXES.values())}
            sb.surface.log = log if log is not None else action_log(end)
            return verify(sb, pkg)
    except SandboxUnavailable as e:
        raise Env0Error("lay out sandbox", pkg.root, str(e)) from None


def verify_env0(task: Task, start: Workspace, end: Workspace, final_answer: str | None,
                paths: TaskPaths) -> VerifierResult:
    """The package's own verifier on the episode's end state; an Env0Error (crash, no reward) propagates, and the
    harness records the episode as a verifier_error rather than a 0."""
    pkg, (_, manifest, extras) = task_start(task, paths)
    reward, result = run_verifier(pkg, start, end, manifest, extras)
    # env0's metrics have no common meaning (a True may be a pass or a tripped gate): kept in detail, not as checks
    return VerifierResult(reward=max(-1.0, min(1.0, reward)), detail=json.dumps(result, sort_keys=True, default=str)[:2000])


def replay_tools(package_dir: Path | str, recording: list[RecordedRequest], *, seed: int = 0, now: datetime,
                 env0_root: Path | None = None) -> Env0Result:
    """The recording as the in-process oracle teacher plays it (`oracle_calls`, each through `Workspace.call`),
    judged as an episode is (verifier.run_verifier: the action log is the calls' HTTP requests)."""
    t0 = time.perf_counter()
    pkg = load_package(package_dir)
    start = seeded_start(pkg, seed, now.replace(microsecond=0), env0_root)
    end = start.ws.fork()
    calls = oracle_calls(recording)
    for c in calls:
        end.call(c.name, c.arguments)
    reward, result = run_verifier(pkg, start.ws, end, start.manifest, start.extras)
    return Env0Result(package=pkg.name, reward=reward, result=result, calls=len(calls), now=now.isoformat(),
                      seconds={"total": round(time.perf_counter() - t0, 3)})
