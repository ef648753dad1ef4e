"""The judge of an env0 package: its own tests/test.sh, run unchanged on an end state, and the reward it writes.

Every verdict on a package is read here (`verify`): an episode's end state (`verify_env0`: the end workspace served
with the start workspace as env0's diff baseline and the agent's calls as env0's action log), a run of the package
(run/runner.py), and the import's check that the replayed oracle passes and doing nothing does not (`score_env0`).
Each verifier run has its own sandbox (private /tmp and ports), so episodes are judged in parallel.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ....sandbox.box import Sandbox, SandboxUnavailable
from ....workspace.environment import Workspace
from ....workspace.tools import TOOLS
from ...model import Task, VerifierResult
from ...reward import RewardError, checked_reward
from ...task_paths import TaskPaths
from ..package.load import Env0Error, Env0Package
from ..run.scripts import OUTPUT_CAP, run_script
from ..seed.start import seeded, task_start
from ..serve.listeners import env0_sandbox
from ..serve.server import log_entry
from ..serve.shapes import STATE
from ..services import PREFIXES

TEMPLATE_ID = "env0"
REWARD = "/logs/verifier/reward.json"


def verify(sb: Sandbox, pkg: Env0Package) -> tuple[float, dict[str, Any]]:
    """tests/test.sh unchanged; (reward, reward.json). A reward.json left from before is removed first. A reward
    that is not a finite number in [-1, 1] (NaN, "1", true, 2.0) is an Env0Error naming it (tasks/reward.py)."""
    try:
        sb.remove_file(REWARD)
    except OSError as e:
        raise Env0Error("read reward", pkg.test_sh, f"cannot remove an earlier reward.json: {e}") from None
    run_script("run tests/test.sh", sb, pkg.test_sh, pkg.verifier_timeout_s)
    try:
        result = json.loads(sb.read_file(REWARD, OUTPUT_CAP))  # a link or fifo planted there is refused
        value = result["reward"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Env0Error("read reward", pkg.test_sh, f"the verifier wrote no reward to $LOGS_DIR/reward.json "
                        f"({type(e).__name__}: {e})") from None
    try:
        return checked_reward(value, "reward.json's reward"), result
    except RewardError as e:
        raise Env0Error("read reward", pkg.test_sh, str(e)) from None

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
        with env0_sandbox(end, package_dir=pkg.root, manifest=manifest, extras=extras) as sb:
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
    return VerifierResult(reward=reward, detail=json.dumps(result, sort_keys=True, default=str)[:2000])

def score_env0(task: Task, pkg: Env0Package, env0_root: Path | None) -> Task:
    """The generation-time check: the replayed oracle and a no-op, each judged by the package's verifier."""
    items = task.recipe.items
    start, manifest, extras = seeded(pkg, items["sha256"], task.recipe.seed, items["now"], env0_root)
    end = start.fork()
    for call in task.oracle:
        end.call(call.name, call.arguments)
    oracle, _ = run_verifier(pkg, start, end, manifest, extras)
    noop, _ = run_verifier(pkg, start, start.fork(), manifest, extras)
    return task.model_copy(update={"oracle_reward": oracle, "noop_reward": noop, "noop_pass": noop >= 1.0})
