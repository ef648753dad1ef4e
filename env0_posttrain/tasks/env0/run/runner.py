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
from typing import Any

from pydantic import BaseModel, ValidationError

from ....sandbox.box import Sandbox, SandboxUnavailable
from ....workspace.tools import TOOLS
from ..judge.verifier import run_verifier, verify
from ..package.load import Env0Error, load_package
from ..serve.recording import RecordedRequest, oracle_calls, replay_http
from ..seed.start import seeded_start
from .scripts import run_script, sandbox


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
