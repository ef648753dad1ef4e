"""A folder of env0 packages as a run's task set (`tasks.source`): import cost, then the oracle teacher's episodes.

    .venv/bin/python bench/env0_source.py SOURCE [--n-train N] [--n-eval N] [--seed S] [--env0-root ENV0_CHECKOUT]
                                         [--processes P] [--cache DIR]

"import" is one package's import (seed, solve.sh against our server, the replayed oracle and a no-op each judged
by the package's tests/test.sh); then the offline oracle teacher (skill 1.0) plays every kept task in-process
through the agent loop, and each episode is judged by the package's verifier in its own sandbox. Prints one row
per package, then the teacher's wall time per episode.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.agent import run_rollouts_sync  # noqa: E402
from env0_posttrain.agent.environment import WorkspaceEnv  # noqa: E402
from env0_posttrain.stages.arms import rollout_settings, teacher_endpoint  # noqa: E402
from env0_posttrain.spec.runspec import parse_spec  # noqa: E402
from env0_posttrain.tasks import make_task_set  # noqa: E402
from env0_posttrain.tasks.env0.corpus import importer as corpus  # noqa: E402
from env0_posttrain.tasks.task_paths import TaskPaths  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("source", type=Path)
    ap.add_argument("--n-train", type=int, default=8)
    ap.add_argument("--n-eval", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--env0-root", type=Path)
    ap.add_argument("--processes", type=int, default=1, help="teacher worker processes")
    ap.add_argument("--cache", type=Path, help="import cache folder (a second run skips the imports)")
    args = ap.parse_args()
    spec = parse_spec({"run_id": "bench-env0-source",
                       "tasks": {"source": str(args.source), "n_train": args.n_train, "n_eval": args.n_eval,
                                 "seed": args.seed},
                       "teacher": {"skill": 1.0, "max_steps": 300, "concurrency": 4,
                                   "processes": args.processes}}, "bench")
    seconds: dict[str, float] = {}
    real_import = corpus.import_package

    def timed(root, source, *a, **k):
        t = time.perf_counter()
        try:
            return real_import(root, source, *a, **k)
        finally:
            seconds[Path(root).name] = time.perf_counter() - t

    corpus.import_package = timed
    t0 = time.perf_counter()
    paths = TaskPaths(env0_root=args.env0_root or os.environ.get("ENV0_ROOT") or None, packages=args.source)
    ts = make_task_set(spec.tasks, import_cache=args.cache, env0_root=paths.env0_root)
    t_import = time.perf_counter() - t0
    print("| package | import s | oracle calls | oracle reward | no-op reward |\n|---|---|---|---|---|")
    for t in ts.tasks:
        print(f"| {t.recipe.items['package']} | {seconds.get(Path(t.recipe.items['package']).name, 0):.2f} | "
              f"{t.difficulty} | {t.oracle_reward} | {t.noop_reward} |")
    for k, v in ts.dropped.items():
        print(f"| {k} | {seconds.get(k, 0):.2f} | dropped: {v[:120]} | | |")
    print(f"\nimport: {len(ts.tasks)} kept of {len(seconds)} imported in {t_import:.1f} s "
          f"({t_import / max(len(seconds), 1):.2f} s per package)\n")

    endpoint = teacher_endpoint(spec)
    t0 = time.perf_counter()
    summary = run_rollouts_sync(ts.tasks, arm="teacher", trials=1, endpoint=endpoint,
                                settings=rollout_settings(spec, arm="teacher"), run_id="bench", progress=False,
                                env=WorkspaceEnv(paths))
    wall = time.perf_counter() - t0
    print(f"teacher (oracle, skill 1.0, concurrency 4, processes {args.processes}): {summary.model_dump(mode='json').get('episodes', len(ts.tasks))} "
          f"episodes in {wall:.1f} s ({wall / len(ts.tasks):.2f} s per episode)")
    print(f"summary: {summary.model_dump(mode='json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
