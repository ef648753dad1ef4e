"""What the env0 sandbox costs, and what an attack costs the runner: laying one out and taking it down, a command
in it against the same command on the host, then each attack of the sandbox's tests followed by the next command.

    .venv/bin/python bench/env0_sandbox.py [--n 50] [--no-attacks]

Prints two tables (milliseconds; median and p95). The difference in the `true` rows is what the sandbox adds to a
command (back to back, and 0.1 s after the previous command as between an agent's turns, when the sandbox's spare
container is ready); the `curl` row adds the forwarder between the private loopback and the service. In the
attack table, `next command` is a `true` right after the attack in the same sandbox, and the runner's resident memory (this
process: VmRSS now, VmHWM its peak) is read before the first attack and after each one.
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

from env0_posttrain.sandbox.box import SandboxLimits  # noqa: E402
from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox  # noqa: E402
from env0_posttrain.workspace.environment import Workspace  # noqa: E402

ATTACKS = {
    "print 600 MB": "head -c 600M /dev/zero",
    "write 300 MB to /proc/1/fd/1": "head -c 300M /dev/zero > /proc/1/fd/1",
    "forge a request on /proc/1/fd/0": "echo '{\"id\": 0, \"argv\": [\"sleep\", \"1000\"]}' > /proc/1/fd/0",
    "fork bomb (10 s limit)": ":(){ :|:& };:",
    "allocate 2x the memory limit": "python3 -c 'x = bytearray(1 << 30)'",
    "kill -9 -1": "kill -9 -1",
    "leave 20 processes behind": "for i in $(seq 20); do setsid nohup sleep 1000 >/dev/null 2>&1 & done",
    "leave a tree 1,500 folders deep": "python3 -c \"import os; fd = os.open('/tmp', 0)\n"
                                       "for _ in range(1500): os.mkdir('d', dir_fd=fd); fd = os.open('d', 0, dir_fd=fd)\"",
    "write 1 GB to /tmp (cap 256 MiB)": "head -c 1G /dev/zero > /tmp/big; rc=$?; rm -f /tmp/big; exit $rc",
    "read the runner's session keyring": "python3 -c 'import ctypes, sys; "  # keyctl(GET_KEYRING_ID, SESSION), x86_64
                                         "sys.exit(ctypes.CDLL(None).syscall(250, 0, -3, 0) < 0)'",
}


def ms(samples: list[float]) -> str:
    p95 = statistics.quantiles(samples, n=20)[-1] if len(samples) > 1 else samples[0]
    return f"{statistics.median(samples) * 1000:8.1f} {p95 * 1000:8.1f}"


def timed(fn, n: int, pause: float = 0.0) -> list[float]:
    out = []
    for _ in range(n):
        time.sleep(pause)
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def rss_mb() -> tuple[float, float]:
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return tuple(int(status[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--no-attacks", action="store_true")
    args = ap.parse_args()
    ws = Workspace.seeded(0)
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, n={args.n}")
    print(f"{'what':40s} {'median ms':>9s} {'p95 ms':>8s}")
    up, down = [], []
    for _ in range(max(3, args.n // 5)):
        t0 = time.perf_counter()
        sb = env0_sandbox(ws).__enter__()
        t1 = time.perf_counter()
        sb.__exit__(None, None, None)
        up.append(t1 - t0)
        down.append(time.perf_counter() - t1)
    print(f"{'lay out + serve (enter)':40s} {ms(up)}")
    print(f"{'take down (exit)':40s} {ms(down)}")
    with env0_sandbox(ws) as sb:
        host_url = "http://localhost:9001/health"
        rows = {
            "true, on the host": timed(lambda: subprocess.run(["true"]), args.n),
            "true, in the sandbox": timed(lambda: sb.run(["true"], timeout=10, output_cap=1000), args.n),
            "true, in the sandbox, 0.1 s after the last": timed(
                lambda: sb.run(["true"], timeout=10, output_cap=1000), args.n, pause=0.1),
            "curl /health, in the sandbox": timed(lambda: sb.run(["curl", "-s", host_url], timeout=10,
                                                                 output_cap=1000), args.n),
        }
    for what, samples in rows.items():
        print(f"{what:40s} {ms(samples)}")
    if args.no_attacks:
        return 0
    limits = SandboxLimits(max_processes=256, memory_mb=512, writable_mb=256)
    print(f"\n# attacks (limits: {limits.max_processes} processes, {limits.memory_mb} MiB, writable "
          f"{limits.writable_mb} MiB / {limits.writable_files} files; output cap 1 MiB)")
    print(f"{'attack':34s} {'attack s':>8s} {'rc':>4s} {'next command ms':>15s} {'runner RSS MB':>13s} {'peak MB':>8s}")
    with env0_sandbox(ws, limits=limits) as sb:
        sb.run(["true"], timeout=10, output_cap=1 << 20)
        print(f"{'(before)':34s} {'':8s} {'':4s} {'':15s} {rss_mb()[0]:13.0f} {rss_mb()[1]:8.0f}")
        for what, cmd in ATTACKS.items():
            t0 = time.perf_counter()
            res = sb.run(["bash", "-c", cmd], timeout=10, output_cap=1 << 20)
            t1 = time.perf_counter()
            nxt = sb.run(["true"], timeout=10, output_cap=1 << 20)
            t2 = time.perf_counter()
            assert nxt.returncode == 0, nxt
            now, peak = rss_mb()
            print(f"{what:34s} {t1 - t0:8.2f} {res.returncode:4d} {(t2 - t1) * 1000:15.1f} {now:13.0f} {peak:8.0f}")
        t0 = time.perf_counter()
    print(f"{'take down after all of them':34s} {time.perf_counter() - t0:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
