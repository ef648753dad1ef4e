"""One env0 package, end to end, in one shape: read the package -> seed -> lay out its sandbox and serve ->
solve.sh | the agent's calls replayed | nothing -> test.sh -> reward.

The package's scripts run unchanged in env0's layout (sandbox/box.py): solution/ and tests/ are put at /solution and
/tests when they run, as env0's harness uploads them. Import (corpus/importer.py) and per-episode judging (judge/verifier.py) use
the same steps. Any failure is an `Env0Error` naming the file and the step, and the reward file then says
`verifier_error` (never a silent 0).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from ....util.tree_removal import remove_tree
from ....workspace.environment import Workspace
from ....workspace.tools import TOOLS
from ..seed.env0_defaults import env0_imports
from ..package.load import Env0Error, Env0Package, load_package
from ..package.files import copy_folder
from ..serve.recording import RecordedRequest, replay_http
from ....sandbox.box import Sandbox, SandboxUnavailable
from ..seed.needles import seed_package

OUTPUT_CAP = 1 << 20  # bytes of a script's stdout / stderr kept (only the tail is reported)
REWARD = "/logs/verifier/reward.json"


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
    sandbox: str | None = None  # "namespaces" or "unconfined" (ENV0_SANDBOX)
    now: str | None = None  # the seeded start's clock (a replay of this run's recording seeds at the same)
    recording: list[RecordedRequest] | None = None  # solve.sh's requests (serve/recording.py), with record=True


class Start(NamedTuple):
    """A package's seeded start: the workspace, the needle manifest (/data), what the server needs beyond rows."""
    ws: Workspace
    manifest: dict[str, Any]
    extras: dict[str, Any]


def seeded_start(pkg: Env0Package, seed: int, now: datetime, env0_root: Path | None = None) -> Start:
    """Our seeded company (or env0's default fills with an env0 checkout) + the package's needles."""
    ws = Workspace.seeded(seed, now)
    try:
        with env0_imports(env0_root):  # needles may import env0's service packages from the checkout
            mod = pkg.load_needles()
            manifest = seed_package(ws, mod, pkg.services, pkg.root.name, seed, env0_root=env0_root)
    except Env0Error:
        raise
    except Exception as e:  # noqa: BLE001 - a needle the seeder cannot read names the file
        raise Env0Error("seed needles", pkg.needles_path, f"{type(e).__name__}: {e}") from e
    extras = manifest.pop("_extras", {})
    return Start(ws, manifest, extras)


def sandbox(pkg: Env0Package, start: Start) -> Sandbox:
    """The package's sandbox over `start` (enter it with `with`); refusing namespaces becomes the package's error."""
    return Sandbox(start.ws, package_dir=pkg.root, manifest=start.manifest, extras=start.extras)


def run_script(step: str, sb: Sandbox, script: Path, timeout: float) -> None:
    """Run solution/solve.sh or tests/test.sh as env0 does: copied to /solution or /tests, `bash` from /."""
    if not script.is_file():
        raise Env0Error(step, script, "missing")
    where = "/" + script.parent.name
    dest = sb.host_path(where)
    for old in dest.iterdir():  # emptied, not replaced: the sandbox has this very folder bound
        remove_tree(old)
    copy_folder(script.parent, dest, sb.package_dir or script.parent.parent)  # links as links, never followed
    try:
        res = sb.run(["bash", sb.path(f"{where}/{script.name}")], timeout=timeout, output_cap=OUTPUT_CAP)
    except RuntimeError as e:  # the sandbox itself went away (its first process ended)
        raise Env0Error(step, script, str(e)) from None
    if res.timed_out:
        raise Env0Error(step, script, f"timed out after {timeout:.0f} s")
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-8:]
        raise Env0Error(step, script, f"exit {res.returncode}: " + " | ".join(tail))


def verify(sb: Sandbox, pkg: Env0Package) -> tuple[float, dict[str, Any]]:
    """tests/test.sh unchanged; (reward, reward.json). A reward.json left from before is removed first."""
    try:
        sb.remove_file(REWARD)
    except OSError as e:
        raise Env0Error("read reward", pkg.test_sh, f"cannot remove an earlier reward.json: {e}") from None
    run_script("run tests/test.sh", sb, pkg.test_sh, pkg.verifier_timeout_s)
    try:
        result = json.loads(sb.read_file(REWARD, OUTPUT_CAP))  # a link or fifo planted there is refused
        return float(result["reward"]), result
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Env0Error("read reward", pkg.test_sh, f"the verifier wrote no reward to $LOGS_DIR/reward.json "
                        f"({type(e).__name__}: {e})") from None


def _replay(sb: Sandbox, calls_path: Path) -> int:
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
        sb.surface.tool_call(spec, c.arguments)
    return len(calls)


def run_package(package_dir: Path | str, *, oracle: bool = False, calls: Path | None = None, seed: int = 0,
                now: datetime | None = None, env0_root: Path | None = None, record: bool = False,
                replay: list[RecordedRequest] | None = None) -> Env0Result:
    """Raises Env0Error; `run_and_record` turns that into a verifier_error reward file. `record`: keep solve.sh's
    requests in the result; `replay`: send such a recording through the services instead of running solve.sh."""
    t0 = time.perf_counter()
    pkg = load_package(package_dir)
    when = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    start = seeded_start(pkg, seed, when, env0_root)
    t_seed = time.perf_counter()
    try:
        with sandbox(pkg, start) as sb:
            t_up = time.perf_counter()
            n = 0
            if oracle:
                run_script("run solution/solve.sh", sb, pkg.solve_sh, pkg.agent_timeout_s)
            elif replay is not None:
                n = replay_http(sb.surface, replay)
            elif calls is not None:
                n = _replay(sb, calls)
            t_solve = time.perf_counter()
            recording = list(sb.surface.requests) if record else None
            reward, result = verify(sb, pkg)
            t_verify = time.perf_counter()
            n = n or sum(len(v) for v in sb.surface.log.values())
    except SandboxUnavailable as e:
        raise Env0Error("lay out sandbox", pkg.root, str(e)) from None
    return Env0Result(package=pkg.name, reward=reward, result=result, calls=n, sandbox=sb.mode, now=when.isoformat(),
                      recording=recording,
                      seconds={"seed": round(t_seed - t0, 3), "sandbox": round(t_up - t_seed, 3),
                               "solve": round(t_solve - t_up, 3), "verify": round(t_verify - t_solve, 3),
                               "total": round(t_verify - t0, 3)})


def run_and_record(package_dir: Path | str, reward_file: Path | None = None, **kw: Any) -> Env0Result:
    """run_package, never raising: an Env0Error, or any other failure of the runner on this package, becomes
    `verifier_error` in the result and the reward file (which is always written)."""
    try:
        res = run_package(package_dir, **kw)
    except Env0Error as e:
        res = Env0Result(package=Path(package_dir).name, reward=None, verifier_error=str(e))
    except Exception as e:  # noqa: BLE001 - the reward file the docs promise, whatever the package did
        res = Env0Result(package=Path(package_dir).name, reward=None,
                         verifier_error=f"run package: {package_dir}: {type(e).__name__}: {str(e)[:500]}")
    if reward_file is not None:
        reward_file = Path(reward_file)
        reward_file.parent.mkdir(parents=True, exist_ok=True)
        body = res.result if res.verifier_error is None else {"reward": None, "verifier_error": res.verifier_error}
        reward_file.write_text(json.dumps(body, indent=2) + "\n")
    return res
