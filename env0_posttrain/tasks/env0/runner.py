"""One env0 package, end to end on loopback: seed -> serve -> solve.sh (or the agent's calls) -> test.sh -> reward.

The package's scripts run unchanged with our `gws` first on PATH and env0's environment variables pointing at
our surface; its reward.json is what the verifier wrote. Any failure is an `Env0Error` naming the file and the
step, and the reward file then says `verifier_error` (never a silent 0).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ValidationError

from ...workspace.environment import Workspace
from ...workspace.tools import TOOLS
from .env0_defaults import env0_imports
from .lock import script_lock
from .package import Env0Error, Env0Package, load_package
from .seeding import seed_package, write_manifest
from .server import serve


class ToolCall(BaseModel):
    name: str
    arguments: dict[str, Any] = {}


class Env0Result(BaseModel):
    package: str
    reward: float | None
    result: dict[str, Any] | None = None  # the verifier's reward.json
    verifier_error: str | None = None
    seconds: dict[str, float] = {}
    calls: int = 0


def _gws_bin(tmp: Path) -> Path:
    """A bin folder whose `gws` runs our shim with this interpreter (test.sh / solve.sh find it on PATH)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "gws"
    # the shim file itself, not `-m`: importing our package per call would cost ~1 s of each gws call
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{Path(__file__).with_name("gws.py")}" "$@"\n')
    shim.chmod(0o755)
    # env0 packages' `python3` steps (inline -c code, evaluate.py) use the standard library only: the base
    # interpreter with -S starts in a third of the virtualenv's time (no .pth files) and skips a version
    # manager's shim; a solve.sh makes ~100 of these calls. ENV0_PACKAGE_PYTHON names another interpreter.
    py = bin_dir / "python3"
    base = os.environ.get("ENV0_PACKAGE_PYTHON") or getattr(sys, "_base_executable", None) or sys.executable
    flag = "" if os.environ.get("ENV0_PACKAGE_PYTHON") else " -S"
    py.write_text(f'#!/bin/sh\nexec "{base}"{flag} "$@"\n')
    py.chmod(0o755)
    return bin_dir


def package_env(pkg: Env0Package, tmp: Path, urls: dict[str, str], manifest_path: Path, logs: Path) -> dict[str, str]:
    """The environment a package's scripts see: our service URLs, its manifest, $LOGS_DIR, our gws first on PATH."""
    return {**os.environ, **urls, "NEEDLE_MANIFEST": str(manifest_path), "TASK_ROOT": str(pkg.root),
            "TASKS_DIR": str(pkg.root.parent), "TASK_NAME": pkg.name, "LOGS_DIR": str(logs),
            "SLACK_BOT_TOKEN": "mock-bot-token", "SLACK_USER_TOKEN": "mock-user-token", "HOME": str(tmp),
            "PATH": f"{_gws_bin(tmp)}{os.pathsep}{os.environ.get('PATH', '')}"}


@contextmanager
def package_sandbox(manifest: dict[str, Any], prefix: str) -> Iterator[tuple[Path, Path, Path]]:
    """(folder, manifest path, $LOGS_DIR) for one script run: a private folder holding the needle manifest and the
    verifier's log folder, removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        manifest_path = tmp / "oracle" / "manifest.json"
        write_manifest(manifest_path, manifest)
        logs = tmp / "logs" / "verifier"
        logs.mkdir(parents=True)
        yield tmp, manifest_path, logs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_reward(logs: Path, test_sh: Path) -> tuple[float, dict[str, Any]]:
    out = logs / "reward.json"
    try:
        result = json.loads(out.read_text())
        return float(result["reward"]), result
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Env0Error("read reward", test_sh, f"the verifier wrote no reward to $LOGS_DIR/reward.json "
                        f"({type(e).__name__}: {e})") from None


def run_script(step: str, script: Path, env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    if not script.is_file():
        raise Env0Error(step, script, "missing")
    try:
        proc = subprocess.run(["bash", str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Env0Error(step, script, f"timed out after {timeout:.0f} s") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
        raise Env0Error(step, script, f"exit {proc.returncode}: " + " | ".join(tail))
    return proc


def _replay(surface: Any, calls_path: Path) -> int:
    try:
        raw = json.loads(calls_path.read_text())
        calls = [ToolCall.model_validate(c) for c in raw] if isinstance(raw, list) else None
    except (OSError, ValueError, ValidationError) as e:
        raise Env0Error("read calls", calls_path, str(e).splitlines()[0]) from None
    if calls is None:
        raise Env0Error("read calls", calls_path, "must be a JSON list of {name, arguments}")
    for c in calls:
        spec = TOOLS.get(c.name)
        if spec is None:
            raise Env0Error("replay calls", calls_path, f"unknown tool {c.name!r}")
        surface.tool_call(spec, c.arguments)
    return len(calls)


def run_package(package_dir: Path | str, *, oracle: bool = False, calls: Path | None = None, seed: int = 0,
                now: datetime | None = None, env0_root: Path | None = None) -> Env0Result:
    """Raises Env0Error; `run_and_record` turns that into a verifier_error reward file."""
    t0 = time.perf_counter()
    root = env0_root or (Path(os.environ["ENV0_ROOT"]) if os.environ.get("ENV0_ROOT") else None)
    with env0_imports(root):  # needles may import env0's service packages from the checkout
        pkg: Env0Package = load_package(package_dir)
        mod = pkg.load_needles()
    now = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    ws = Workspace.seeded(seed, now)
    try:
        manifest = seed_package(ws, mod, pkg.services, pkg.name, seed, env0_root=root)
    except Env0Error:
        raise
    except Exception as e:  # noqa: BLE001 - a needle the seeder cannot read names the file
        raise Env0Error("seed needles", pkg.needles_path, f"{type(e).__name__}: {e}") from e
    t_seed = time.perf_counter()
    extras = manifest.pop("_extras", {})
    with package_sandbox(manifest, "env0-") as (tmp, manifest_path, logs):
        with script_lock(), serve(ws, extras) as (urls, surface):  # scripts share fixed /tmp paths: one at a time
            env = package_env(pkg, tmp, urls, manifest_path, logs)
            n = 0
            if oracle:
                run_script("run solution/solve.sh", pkg.solve_sh, env, tmp, pkg.agent_timeout_s)
            elif calls is not None:
                n = _replay(surface, calls)
            t_solve = time.perf_counter()
            run_script("run tests/test.sh", pkg.test_sh, env, tmp, pkg.verifier_timeout_s)
            t_verify = time.perf_counter()
            n = n or sum(len(v) for v in surface.log.values())
        reward, result = read_reward(logs, pkg.test_sh)
        return Env0Result(package=pkg.name, reward=reward, result=result, calls=n,
                          seconds={"seed": round(t_seed - t0, 3), "solve": round(t_solve - t_seed, 3),
                                   "verify": round(t_verify - t_solve, 3), "total": round(t_verify - t0, 3)})


def run_and_record(package_dir: Path | str, reward_file: Path | None = None, **kw: Any) -> Env0Result:
    """run_package, never raising: an Env0Error becomes `verifier_error` in the result and the reward file."""
    try:
        res = run_package(package_dir, **kw)
    except Env0Error as e:
        res = Env0Result(package=Path(package_dir).name, reward=None, verifier_error=str(e))
    if reward_file is not None:
        reward_file = Path(reward_file)
        reward_file.parent.mkdir(parents=True, exist_ok=True)
        body = res.result if res.verifier_error is None else {"reward": None, "verifier_error": res.verifier_error}
        reward_file.write_text(json.dumps(body, indent=2) + "\n")
    return res
