"""The shell surface's figures: oracle episodes per second on each surface, and what one command costs.

    .venv/bin/python bench/shell_surface.py PACKAGES [--env0-root ENV0] [--cache DIR] [--concurrency N]
                                            [--processes P] [--skip NAME ...] [--overhead-runs N]

1. The packages of PACKAGES (e.g. env0-mobile/tasks-eval, the standard 60) are imported as tasks (those that fail
   to import are named with the reason: the auth and stripe services are not served yet), then the offline oracle
   teacher (skill 1.0) plays every task on the `tools` surface (its recorded API calls, in-process) and on the
   `shell` surface (solve.sh verbatim as one `terminal` command in the package's sandbox, then `finish`); each
   episode is judged by the package's own tests/test.sh. Prints passes and episodes per second for each.
2. The overhead of one command: `true` through the surface (ShellSession.run: the sandbox's pipe to its keeper,
   the command's bubblewrap container, bash, the result's text) against `bash -c true` started directly from a
   small process, and against the sandbox's own run() without the shell layer's wrapper; then `true` through the
   surface 0.1 s after the previous command, as between an agent's turns (the sandbox's spare container is ready
   then; back to back, a command may wait for the spare still being made). Medians in ms.
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

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync  # noqa: E402
from env0_posttrain.spec.runspec import ShellSpec  # noqa: E402
from env0_posttrain.tasks.env0.corpus import importer as corpus  # noqa: E402
from env0_posttrain.tasks.env0.package.load import Env0Error  # noqa: E402
from env0_posttrain.agent.environment import WorkspaceEnv  # noqa: E402
from env0_posttrain.tasks.task_paths import TaskPaths  # noqa: E402


def import_all(source: Path, cache: Path | None, skip: set[str], jobs: int,
               env0_root: Path | None) -> tuple[list, dict[str, str]]:
    from concurrent.futures import ThreadPoolExecutor

    roots = [r for r in corpus.package_dirs(source) if r.name not in skip]
    dropped = {name: "skipped (--skip)" for name in sorted(skip)}

    def one(root: Path):
        try:
            return corpus.import_cached(root, source, source, cache, env0_root=env0_root)
        except Env0Error as e:
            return str(e).splitlines()[0][:160]

    tasks = []
    with ThreadPoolExecutor(jobs) as pool:
        for root, task in zip(roots, pool.map(one, roots)):
            if isinstance(task, str):
                dropped[root.name] = task
            elif (task.oracle_reward or 0) < 1.0 or task.noop_pass:
                dropped[root.name] = f"import check: oracle {task.oracle_reward}, no-op {task.noop_reward}"
            else:
                tasks.append(task)
    return tasks, dropped


def play(tasks: list, surface: str, concurrency: int, processes: int, paths: TaskPaths) -> tuple[float, object, list]:
    eps: list = []
    settings = AgentSettings(max_steps=300, concurrency=concurrency, processes=processes, surface=surface,
                             shell=ShellSpec(timeout_s=600, max_timeout_s=600, output_cap=30000))
    t0 = time.perf_counter()
    summary = run_rollouts_sync(tasks, "teacher", 1, oracle_endpoint(skill=1.0), settings, f"bench-{surface}", set(),
                                eps.append, progress=False, env=WorkspaceEnv(paths))
    return time.perf_counter() - t0, summary, eps


def median_ms(fn, n: int, pause: float = 0.0) -> float:
    xs = []
    for _ in range(n):
        time.sleep(pause)
        t = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t)
    return round(statistics.median(xs) * 1000, 2)


def overhead(n: int) -> dict[str, float]:
    from env0_posttrain.agent.shell.session import ShellSession
    from env0_posttrain.tasks import build_workspace, generate_tasks

    task = generate_tasks(0, per_template=1)[0]
    session = ShellSession(task, build_workspace(task), ShellSpec())
    try:
        session.run("true", 10)  # warm
        small = [sys.executable, "-S", "-c", "import subprocess,sys\nfor _ in range(int(sys.argv[1])): "
                 "subprocess.run(['bash','-c','true'])", str(n)]
        t = time.perf_counter()
        subprocess.run(small, check=True)
        direct = round((time.perf_counter() - t) * 1000 / n, 2)  # includes the small process's start, over n
        raw = median_ms(lambda: session.sandbox.sandbox.run(["bash", "-c", "true"], timeout=10, output_cap=1000), n)
        surface = median_ms(lambda: session.run("true", 10), n)
        paused = median_ms(lambda: session.run("true", 10), n, pause=0.1)
    finally:
        session.close()
    return {"bash -c true, started directly (mean)": direct, "sandbox.run(bash -c true) (median)": raw,
            "terminal `true` through the shell surface (median)": surface,
            "overhead of the surface over the direct start": round(surface - direct, 2),
            "the same, each 0.1 s after the last (an agent's turn; median)": paused,
            "overhead then": round(paused - direct, 2)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("packages", type=Path)
    ap.add_argument("--env0-root", type=Path)
    ap.add_argument("--cache", type=Path, help="import cache folder (a second run skips the imports)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--skip", nargs="*", default=[], help="package names to leave out")
    ap.add_argument("--overhead-runs", type=int, default=200)
    ap.add_argument("--surfaces", nargs="*", default=["tools", "shell"])
    args = ap.parse_args()
    paths = TaskPaths(env0_root=args.env0_root or os.environ.get("ENV0_ROOT") or None, packages=args.packages)
    source = paths.packages
    t0 = time.perf_counter()
    tasks, dropped = import_all(source, args.cache, set(args.skip), args.concurrency, paths.env0_root)
    print(f"imported {len(tasks)} of {len(tasks) + len(dropped)} packages in {time.perf_counter() - t0:.0f} s")
    for name, why in dropped.items():
        print(f"  dropped {name}: {why}")
    print("\n| surface | episodes | passed | wall s | episodes/s | confinement events |\n|---|---|---|---|---|---|")
    for surface in args.surfaces:
        wall, s, eps = play(tasks, surface, args.concurrency, args.processes, paths)
        events = {k: v for k, v in s.error_counts.items() if k.startswith("shell_")}
        print(f"| {surface} | {s.completed} | {s.passed} | {wall:.1f} | {s.completed / wall:.2f} | {events or '-'} |",
              flush=True)
        for e in eps:
            if not e.passed:
                print(f"    not passed: {e.task_id} reward={e.reward} stop={e.stop_condition} {e.error or ''}")
    print("\n| one command | ms |\n|---|---|")
    for k, v in overhead(args.overhead_runs).items():
        print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
