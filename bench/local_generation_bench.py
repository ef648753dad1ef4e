"""The local student's generation on a run's eval suite, through the real harness: wall time and tokens per
episode with the prefix cache off and on, and with the stuck detector off and on.

Prompt tokens are what the episodes' requests held; prefilled tokens are what the model computed (prompt tokens
minus those reused from the prefix cache); generated tokens are the replies. The run must have its base model
(and, for `--arm sft`, its adapter) materialized; tasks are the suite's first `--tasks` in task-id order.

    .venv/bin/python bench/local_generation_bench.py --data-dir data --run seeds --suite standard60 --arm sft --tasks 20
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from collections import Counter
from pathlib import Path

from tabulate import tabulate

VARIANTS = {  # name -> (prefix cache MB, stuck_after)
    "no cache, no stuck stop": (0.0, None),
    "prefix cache": (None, None),
    "prefix cache + stuck stop": (None, "spec"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--arm", choices=("base", "sft"), default="sft")
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--trials", type=int, default=None, help="default: the suite's")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    args = ap.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    from stored_run import open_run

    from env0_posttrain.agent import ModelEndpoint, register_local_model, run_rollouts_sync
    from env0_posttrain.agent.providers.local_model import PREFIX_CACHE_MB, local_model
    from env0_posttrain.stages.arms import rollout_settings

    run = open_run(args.data_dir, args.run)
    paths, spec, store, env = run.paths, run.spec, run.store, run.env
    tasks = run.suite_tasks(args.run, args.suite)[: args.tasks]
    suite = next((s for s in spec.suites if s.name == args.suite), None)  # None: the tasks.n_eval split ("eval")
    trials = args.trials or (suite.trials if suite is not None else None) or spec.eval.trials
    base = run.base(args.run)
    adapter = None
    if args.arm == "sft":
        training = store.latest_training(args.run)
        adapter = paths.resolve(training["adapter_path"])
    max_steps, max_tokens = spec.eval_limits()
    rows = []
    for name in args.variants:
        cache_mb, stuck = VARIANTS[name]
        settings = rollout_settings(spec, "base").model_copy(
            update={"stuck_after": spec.eval.stuck_after if stuck == "spec" else None})
        alias = f"bench-{len(rows)}"
        model_id = register_local_model(alias, base, adapter_path=adapter,
                                        prefix_cache_mb=PREFIX_CACHE_MB if cache_mb is None else cache_mb,
                                        repetition_window=spec.eval.repetition_window)
        endpoint = ModelEndpoint(model=model_id, max_tokens=max_tokens, temperature=spec.eval.temperature)
        episodes = []
        t0 = time.perf_counter()
        run_rollouts_sync(tasks, args.arm, trials, endpoint, settings, f"bench-{args.run}",
                          on_episode=episodes.append, progress=False, env=env)
        wall = time.perf_counter() - t0
        stats = local_model(alias).stats
        n = len(episodes)
        rows.append({
            "variant": name, "stuck_after": settings.stuck_after, "episodes": n, "passed": sum(e.passed for e in episodes),
            "wall s": round(wall, 1), "steps/ep": sum(len(e.exchanges) for e in episodes) / n,
            "prompt tok/ep": stats.prompt_tokens / n, "prefilled tok/ep": stats.prefilled_tokens / n,
            "generated tok/ep": stats.generated_tokens / n, "mean batch": sum(stats.batches) / max(1, len(stats.batches)),
            "batches": len(stats.batches), "decode steps": stats.decode_steps, "generate s": round(stats.generate_s, 1),
            "stops": dict(Counter(e.stop_condition for e in episodes)),
        })
        print(rows[-1], flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    print(f"\n{args.arm} on {args.suite} ({len(tasks)} tasks x {trials} trials), {max_steps} steps x {max_tokens} tokens, "
          f"concurrency {spec.eval.concurrency}; {platform.node()}, {os.cpu_count()} CPUs, commit {commit}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(tabulate(rows, headers="keys", floatfmt=".1f"))


if __name__ == "__main__":
    main()
