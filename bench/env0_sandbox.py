"""What the env0 sandbox costs: laying one out (namespaces, mounts, the services' sockets) and taking it down, and
the time a command takes in it against the same command started on the host.

    .venv/bin/python bench/env0_sandbox.py [--n 50]

Prints a table (median and p95 in milliseconds). The difference in the `true` row is what the sandbox adds to each
command of the shell surface; the `curl` rows add the forwarder between the private loopback and the service.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.tasks.env0.sandbox import Sandbox  # noqa: E402
from env0_posttrain.workspace.environment import Workspace  # noqa: E402


def ms(samples: list[float]) -> str:
    p95 = statistics.quantiles(samples, n=20)[-1] if len(samples) > 1 else samples[0]
    return f"{statistics.median(samples) * 1000:8.1f} {p95 * 1000:8.1f}"


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    args = ap.parse_args()
    ws = Workspace.seeded(0)
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, n={args.n}")
    print(f"{'what':40s} {'median ms':>9s} {'p95 ms':>8s}")
    up, down = [], []
    for _ in range(max(3, args.n // 5)):
        t0 = time.perf_counter()
        sb = Sandbox(ws).__enter__()
        t1 = time.perf_counter()
        sb.__exit__(None, None, None)
        up.append(t1 - t0)
        down.append(time.perf_counter() - t1)
    print(f"{'lay out + serve (enter)':40s} {ms(up)}")
    print(f"{'take down (exit)':40s} {ms(down)}")
    with Sandbox(ws) as sb:
        host_url = "http://localhost:9001/health"
        rows = {
            "true, on the host": timed(lambda: subprocess.run(["true"]), args.n),
            "true, in the sandbox": timed(lambda: sb.run(["true"], timeout=10, output_cap=1000), args.n),
            "curl /health, in the sandbox": timed(lambda: sb.run(["curl", "-s", host_url], timeout=10,
                                                                 output_cap=1000), args.n),
        }
    for what, samples in rows.items():
        print(f"{what:40s} {ms(samples)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
