"""Does the offline student learn the seeds' tasks? One variant of the student and the LoRA recipe per call: LoRA on a
run's stored SFT rows, then base and adapter through the real harness on the run's seen suite (every family, or a
sample of each), strict passes per family, with wall times. `--student` builds another tiny student from the run's
training tasks (cached by recipe and corpus like the pipeline's); `--lora` and `--eval` override the run spec's
sections for this variant only.

    .venv/bin/python bench/seeds_learning_bench.py --data-dir data --run seeds --lora max_steps=300 max_seq_length=2048
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path


def _kv(items: list[str]) -> dict:
    out = {}
    for item in items:
        k, v = item.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--suite", default="seen300")
    ap.add_argument("--per-family", type=int, default=0, help="tasks per family (seeded sample); 0 = all")
    ap.add_argument("--student", nargs="*", default=[], help="TinyStudentConfig overrides: a new base")
    ap.add_argument("--corpus", nargs="*", default=[], help="CorpusMix overrides (with --student or alone)")
    ap.add_argument("--lora", nargs="*", default=[])
    ap.add_argument("--eval", nargs="*", default=[], help="EvalSpec overrides (max_steps, max_tokens, stuck_after...)")
    ap.add_argument("--skip-base", action="store_true", help="do not evaluate the base (it was measured already)")
    args = ap.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    import torch

    from stored_run import open_run

    from env0_posttrain.agent import ModelEndpoint, register_local_model, run_rollouts_sync
    from env0_posttrain.agent.endpoint import AgentSettings
    from env0_posttrain.spec.runspec import CorpusMix, LoraSpec
    from env0_posttrain.tasks.model import Task
    from env0_posttrain.train import TinyStudentConfig
    from env0_posttrain.train.lora_sft import train_lora
    from env0_posttrain.train.tiny_student.corpus import ensure_task_student
    from env0_posttrain.util import torch_threads

    run = open_run(args.data_dir, args.run)
    paths, spec, store, env = run.paths, run.spec, run.store, run.env
    threads = torch_threads.use_run_threads(spec.torch_threads)
    t0 = time.perf_counter()
    if args.student or args.corpus:
        train_tasks = [Task.model_validate_json(j) for _, j in store.load_tasks(args.run, "train")]
        config = TinyStudentConfig(**{"pretrain_steps": spec.student.pretrain_steps, **_kv(args.student)})
        mix = CorpusMix(**{**spec.student.corpus.model_dump(), **_kv(args.corpus)})
        base = ensure_task_student(paths.models, train_tasks, config, mix)
    else:
        base = run.base(args.run)
    build_s = time.perf_counter() - t0

    rows = store.load_sft_rows(args.run)
    lora = LoraSpec(**{**spec.lora.model_dump(), **_kv(args.lora)})
    tasks = run.suite_tasks(args.run, args.suite)
    if args.per_family:
        by_family = defaultdict(list)
        for t in tasks:
            by_family[t.family].append(t)
        rng = random.Random(0)
        tasks = [t for fam in sorted(by_family) for t in rng.sample(by_family[fam], min(args.per_family, len(by_family[fam])))]
    eval_spec = spec.eval.model_copy(update=_kv(args.eval))
    settings = AgentSettings.for_eval(eval_spec)
    _, max_tokens = spec.eval_limits()
    max_tokens = eval_spec.max_tokens or max_tokens
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        result = train_lora(rows, None, lora, base, Path(out), resume=False)
        train_s = time.perf_counter() - t0
        arms = [("sft", result.adapter_dir)] if args.skip_base else [("base", None), ("sft", result.adapter_dir)]
        scores = {}
        for arm, adapter in arms:
            model = register_local_model(f"learn-{arm}", base, adapter_path=adapter,
                                         repetition_window=eval_spec.repetition_window)
            eps = []
            t0 = time.perf_counter()
            run_rollouts_sync(tasks, arm, 1, ModelEndpoint(model=model, max_tokens=max_tokens), settings,
                              f"learn-{args.run}", on_episode=eps.append, progress=False, env=env)
            fams = Counter(next(t.family for t in tasks if t.id == e.task_id) for e in eps if e.passed)
            scores[arm] = {"passed": sum(e.passed for e in eps), "of": len(eps), "by_family": dict(sorted(fams.items())),
                           "eval_s": round(time.perf_counter() - t0, 1),
                           "stops": dict(Counter(e.stop_condition for e in eps)),
                           "mean_reward": round(sum(e.reward or 0 for e in eps) / max(1, len(eps)), 3)}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    row = {"student": _kv(args.student), "corpus": _kv(args.corpus), "lora": _kv(args.lora), "eval": _kv(args.eval),
           "build_s": round(build_s, 1), "train_s": round(train_s, 1), "steps": result.steps,
           "rows": result.n_train_rows, "tokens": result.train_tokens,
           "loss": [round(result.first_train_loss or 0, 3), round(result.final_train_loss or 0, 3)], **scores,
           "tasks": len(tasks), "suite": args.suite, "threads": threads.threads, "torch": torch.__version__,
           "machine": f"{platform.node()} {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", "commit": commit}
    print("RESULT", json.dumps(row))


if __name__ == "__main__":
    main()
