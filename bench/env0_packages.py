"""env0 task packages through our runtime: oracle reward, no-op reward and seconds per package.

    .venv/bin/python bench/env0_packages.py DIR [DIR ...] [--noop] [--replay] [--env0-root ENV0] [--jobs N]
                                            [--sample N --seed S]

Each DIR is a package or a folder of packages (folders with tests/test.sh). Each package runs in its own sandbox
(sandbox/box.py; `ENV0_SANDBOX=unconfined` for the host mode), so `--jobs N` runs N packages at once (worker
processes). "seed" is building our workspace and planting the needles, "sandbox" laying out the sandbox and
serving, "solve" running solution/solve.sh, "verify" running tests/test.sh unchanged against our /_admin
endpoints; "s/pkg" is the package's oracle + no-op run. Prints one row per package, the count at the oracle's full
reward (1.0), seconds per package (median, p95), the wall time, and every verifier_error grouped by its cause.
`--replay` also records solve.sh's requests at the HTTP layer (serve/recording.py) and judges two replays of them on a
fresh start with the same clock: "tools", the oracle teacher's tool calls in-process (what an imported task's
oracle does), and "http", the recorded requests sent again through the services; a replay that disagrees with
solve.sh is listed, as are the recorded requests that made no tool call (by service, verb, path and status).
env0's own flow builds a Docker image per package (its Dockerfile seeds the SQLite mocks at build time) and starts
the services in a container before the agent runs; its time is not measured here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.tasks.env0.package.load import Env0Error  # noqa: E402
from env0_posttrain.tasks.env0.run.runner import Env0Result, run_and_record, replay_tools  # noqa: E402


def packages(paths: list[Path]) -> list[Path]:
    out = []
    for p in paths:
        if (p / "tests" / "test.sh").is_file():
            out.append(p)
        else:
            out += sorted(d for d in p.iterdir() if (d / "tests" / "test.sh").is_file())
    return out


def one(p: Path, noop: bool, env0_root: Path | None, replay: bool = False
        ) -> tuple[Path, Env0Result, Env0Result | None, float, dict[str, Env0Result]]:
    t0 = time.perf_counter()
    res = run_and_record(p, oracle=True, env0_root=env0_root, record=replay)
    nres = run_and_record(p, oracle=False, env0_root=env0_root) if noop else None
    replays: dict[str, Env0Result] = {}
    if replay and res.recording is not None:
        now = datetime.fromisoformat(res.now)
        try:
            replays["tools"] = replay_tools(p, res.recording, now=now, env0_root=env0_root)
        except Env0Error as e:
            replays["tools"] = Env0Result(package=p.name, reward=None, verifier_error=str(e))
        replays["http"] = run_and_record(p, replay=res.recording, now=now, env0_root=env0_root)
    return p, res, nres, time.perf_counter() - t0, replays


def toolless(res: Env0Result) -> list[str]:
    """The recorded requests that made no tool call, as `service VERB /path/pattern status`."""
    out = []
    for r in res.recording or []:
        if not r.calls:
            shape = re.sub(r"/[A-Za-z0-9_-]{16,}", "/{id}", r.path)
            out.append(f"{r.prefix} {r.method} {shape} {r.status}")
    return out


def cause(err: str) -> str:
    """A verifier_error by kind: its step, and the first words of the message without paths or numbers."""
    step, _, rest = err.partition(": ")
    msg = rest.split(": ", 1)[-1]
    return step + ": " + re.sub(r"\d+", "N", re.sub(r"/\S+", "PATH", msg))[:90]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--noop", action="store_true", help="also run the verifier on the untouched seeded state")
    ap.add_argument("--env0-root", type=Path, help="an env0 checkout: its gcal seed packs, default Slack / Gmail fills and service packages")
    ap.add_argument("--jobs", type=int, default=1, help="packages at once (worker processes)")
    ap.add_argument("--sample", type=int, help="a seeded random sample of this many packages")
    ap.add_argument("--seed", type=int, default=0, help="the sample's seed")
    ap.add_argument("--replay", action="store_true", help="also judge the oracle's replays (tools, http)")
    args = ap.parse_args()
    pkgs = packages(args.dirs)
    if args.sample:
        pkgs = sorted(random.Random(args.seed).sample(pkgs, min(args.sample, len(pkgs))))
    print(f"# {len(pkgs)} packages, jobs {args.jobs}, sandbox {os.environ.get('ENV0_SANDBOX', 'namespaces')}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"{'package':60s} {'oracle':>7s} {'no-op':>7s} {'seed':>6s} {'sandbox':>8s} {'solve':>6s} {'verify':>7s} "
          f"{'s/pkg':>6s}" + (f" {'tools':>7s} {'http':>7s}" if args.replay else ""))
    full, t0, errors, per = 0, time.perf_counter(), [], []
    agree: Counter[str] = Counter()
    disagree: list[tuple[str, str, str]] = []
    no_tool: Counter[str] = Counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        runs = pool.map(one, pkgs, [args.noop] * len(pkgs), [args.env0_root] * len(pkgs), [args.replay] * len(pkgs))
        for p, res, noop, secs, replays in runs:
            full += res.reward == 1.0
            per.append(secs)
            s = res.seconds
            label = f"{p.parent.name}/{p.name}"[:60]
            fmt = lambda r: "err" if r is None or r.reward is None else f"{r.reward:.3f}"  # noqa: E731
            print(f"{label:60s} {fmt(res):>7s} {fmt(noop) if noop else '-':>7s} {s.get('seed', 0):6.2f} "
                  f"{s.get('sandbox', 0):8.2f} {s.get('solve', 0):6.2f} {s.get('verify', 0):7.2f} {secs:6.2f}"
                  + "".join(f" {fmt(replays.get(k)):>7s}" for k in ("tools", "http") if args.replay), flush=True)
            for kind, rep in replays.items():
                if res.reward == 1.0 and rep.reward == 1.0:
                    agree[kind] += 1
                elif res.reward == 1.0:
                    disagree.append((label, kind, rep.verifier_error or f"{rep.reward}: {json.dumps(rep.result)[:240]}"))
            no_tool.update(toolless(res))
            errors += [(label, r.verifier_error) for r in (res, noop) if r is not None and r.verifier_error]
            if noop is not None and noop.reward is not None and noop.reward >= 1.0:
                errors.append((label, "no-op: doing nothing scores 1.0"))
    wall = time.perf_counter() - t0
    p95 = statistics.quantiles(per, n=20)[-1] if len(per) > 1 else (per[0] if per else 0.0)
    print(f"# oracle full reward: {full}/{len(pkgs)}; seconds per package (oracle + no-op): median "
          f"{statistics.median(per) if per else 0:.2f}, p95 {p95:.2f}; wall {wall:.1f} s with {args.jobs} job(s)")
    if args.replay:
        print(f"# replay agrees with solve.sh's 1.0: tools {agree['tools']}/{full}, http {agree['http']}/{full}")
        for label, kind, why in disagree:
            print(f"#   {kind} replay of {label}: {why}")
        print(f"# recorded requests with no tool call: {sum(no_tool.values())}")
        for kind, n in no_tool.most_common():
            print(f"#   {n:5d} x {kind}")
    for kind, n in Counter(cause(e) for _, e in errors).most_common():
        print(f"# {n:4d} x {kind}")
    for label, e in errors:
        print(f"#   {label}: {e[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
