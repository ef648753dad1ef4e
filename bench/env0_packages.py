"""env0 task packages through our runtime: oracle reward, no-op reward and seconds per package.

    .venv/bin/python bench/env0_packages.py DIR [DIR ...] [--noop] [--env0-root ENV0_CHECKOUT]

Each DIR is a package or a folder of packages (folders with tests/test.sh). "seed" is building our
workspace and planting the needles, "solve" running solution/solve.sh, "verify" running tests/test.sh
unchanged against our /_admin endpoints. Prints one row per package and the count at the oracle's full
reward (1.0). env0's own flow builds a Docker image per package (its Dockerfile seeds the SQLite mocks at
build time) and starts the services in a container before the agent runs; its time is not measured here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.tasks.env0.runner import run_and_record  # noqa: E402


def packages(paths: list[Path]) -> list[Path]:
    out = []
    for p in paths:
        if (p / "tests" / "test.sh").is_file():
            out.append(p)
        else:
            out += sorted(d for d in p.iterdir() if (d / "tests" / "test.sh").is_file())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--noop", action="store_true", help="also run the verifier on the untouched seeded state")
    ap.add_argument("--env0-root", type=Path, help="an env0 checkout: its gcal seed packs, default Slack / Gmail fills and service packages")
    args = ap.parse_args()
    pkgs = packages(args.dirs)
    print(f"# {len(pkgs)} packages, load average {os.getloadavg()[0]:.2f}")
    print(f"{'package':55s} {'oracle':>7s} {'no-op':>7s} {'seed s':>7s} {'solve s':>8s} {'verify s':>9s} {'total s':>8s}")
    full, t0, errors = 0, time.perf_counter(), []
    for p in pkgs:
        res = run_and_record(p, oracle=True, env0_root=args.env0_root)
        noop = run_and_record(p, oracle=False, env0_root=args.env0_root) if args.noop else None
        full += res.reward == 1.0
        s = res.seconds
        label = f"{p.parent.name}/{p.name}"
        fmt = lambda r: "err" if r is None or r.reward is None else f"{r.reward:.3f}"  # noqa: E731
        print(f"{label:55s} {fmt(res):>7s} {fmt(noop) if noop else '-':>7s} {s.get('seed', 0):7.2f} "
              f"{s.get('solve', 0):8.2f} {s.get('verify', 0):9.2f} {s.get('total', 0):8.2f}")
        for r in (res, noop):
            if r is not None and r.verifier_error:
                errors.append(f"{label}: {r.verifier_error}")
    print(f"# oracle full reward: {full}/{len(pkgs)}; wall {time.perf_counter() - t0:.1f} s")
    for e in errors:
        print("#", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
