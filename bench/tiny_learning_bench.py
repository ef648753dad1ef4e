"""Does the tiny student learn? Build it, train a LoRA, compare base vs adapter on unseen rows.

Measures greedy exact match of the first tool call (name + arguments) and whether the model stops
with a plain answer after the tool result, on eval rows never trained on, plus wall times.

    .venv/bin/python bench/tiny_learning_bench.py --student hidden_size=192 --lora r=16 learning_rate=2e-3
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from env0_posttrain.spec.runspec import LoraSpec
from env0_posttrain.making.presets import preset_data
from env0_posttrain.train.generation import (
    first_call_prompt,
    greedy_completions,
    load_tokenizer_with_parser,
    parse_tool_calls,
)
from env0_posttrain.train.lora_sft import train_lora
from env0_posttrain.train.probe.chat_rows import first_call_matches
from env0_posttrain.train.synthetic_rows import make_synthetic_set
from env0_posttrain.train.tiny_student.build import (
    TinyStudentConfig,
    ensure_tiny_student,
    student_info,
)


def _kv(items: list[str]) -> dict:
    out = {}
    for item in items:
        k, v = item.split("=", 1)
        out[k] = json.loads(v) if v[:1] in "[{" or v.replace(".", "").replace("e-", "").isdigit() else v
    return out


def score(model, tok, rows) -> dict[str, float]:
    prompts, expected, after = [], [], []
    for r in rows:
        msgs, call = first_call_prompt(r)
        prompts.append((msgs, r["tools"]))
        expected.append(call)
        after.append((r["messages"][:-1], r["tools"]))  # up to the tool result: should answer, not call again
    first = greedy_completions(model, tok, prompts, 96)
    final = greedy_completions(model, tok, after, 48)
    match = first_call_matches(tok, first, expected)
    stops = [not parse_tool_calls(tok, t) and t.endswith("<|im_end|>") for t in final]
    name_ok = [bool(c) and c[0]["name"] == e["name"] for c, e in zip((parse_tool_calls(tok, t) for t in first), expected)]
    episode = [m and s for m, s in zip(match, stops)]
    n = len(rows)
    print("EXAMPLE", json.dumps(first[:2]), json.dumps(final[:1]))
    return {"first_call": sum(match) / n, "tool_name": sum(name_ok) / n, "stops": sum(stops) / n, "episode": sum(episode) / n}


def real_task_set(n_train: int, n_eval: int, max_calls: int):
    """Starter tasks, split by task id; rows are the oracle played through the workspace."""
    import math
    import random

    from env0_posttrain.tasks import generate_tasks, starter_template_ids
    from env0_posttrain.train.tiny_student.corpus import oracle_row, student_corpus
    from env0_posttrain.train.synthetic_rows import SyntheticSet

    ids = starter_template_ids(max_calls)
    tasks = generate_tasks(0, templates=ids, per_template=math.ceil(2 * (n_train + n_eval) / len(ids)))
    tasks = [t for t in tasks if not t.noop_pass]
    random.Random(0).shuffle(tasks)
    train, evals = tasks[:n_train], tasks[n_train : n_train + n_eval]
    corpus, entities = student_corpus(train)
    data = SyntheticSet(train=[oracle_row(t) for t in train], eval=[oracle_row(t) for t in evals], corpus=corpus, entities=entities)
    data.eval_tasks = evals
    data.train_tasks = train
    return data


def agent_pass_rates(base_path, adapter_dir, tasks, trials: int, max_steps: int) -> dict[str, float]:
    """Strict pass rate (verifier reward >= 1) of base and adapter through the real agent loop."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from env0_posttrain.agent import (
        AgentSettings,
        ModelEndpoint,
        register_local_model,
        run_rollouts_sync,
    )

    out = {}
    settings = AgentSettings(max_steps=max_steps, concurrency=64)
    for arm, alias, adapter in (("base", "bench-base", None), ("sft", "bench-sft", adapter_dir)):
        model = register_local_model(alias, base_path, adapter_path=adapter, max_batch_size=64)
        passed: list[bool] = []
        t0 = time.perf_counter()
        run_rollouts_sync(tasks, arm, trials, ModelEndpoint(model=model, max_tokens=160), settings, "bench",
                          on_episode=lambda ep, sink=passed: sink.append(ep.passed), progress=False)
        out[f"{arm}_pass"] = sum(passed) / max(len(passed), 1)
        out[f"{arm}_eval_s"] = round(time.perf_counter() - t0, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--student", nargs="*", default=[])
    ap.add_argument("--lora", nargs="*", default=[])
    ap.add_argument("--n-train", type=int, default=300)
    ap.add_argument("--n-eval", type=int, default=60)
    ap.add_argument("--cache", default="data/cache/tiny-students")
    ap.add_argument("--student-path", default=None, help="a student already built (skips the build)")
    ap.add_argument("--tasks", action="store_true", help="real starter tasks (oracle played) instead of synthetic rows")
    ap.add_argument("--max-calls", type=int, default=1)
    ap.add_argument("--agent-trials", type=int, default=0, help="with --tasks: also run the agent loop, K trials")
    args = ap.parse_args()
    import os

    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))  # a loaded 2-core box thrashes with 2
    c0 = time.process_time()
    data = real_task_set(args.n_train, args.n_eval, args.max_calls) if args.tasks else make_synthetic_set(args.n_train, args.n_eval, seed=0)
    cfg = TinyStudentConfig(**_kv(args.student))
    lora = LoraSpec(**{**preset_data("demo", "x")["lora"], **_kv(args.lora)})
    t0 = time.perf_counter()
    base_path = Path(args.student_path) if args.student_path else ensure_tiny_student(Path(args.cache), data.corpus, data.entities, cfg)
    t_build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        res = train_lora(data.train, None, lora, base_path, Path(out), resume=False)
        t_train = time.perf_counter() - t0
        tok = load_tokenizer_with_parser(base_path)
        base = AutoModelForCausalLM.from_pretrained(str(base_path))
        t0 = time.perf_counter()
        b = score(base, tok, data.eval)
        t_eval = time.perf_counter() - t0
        tuned = PeftModel.from_pretrained(base, str(res.adapter_dir))
        a = score(tuned, tok, data.eval)
        t_train_rows = score(tuned, tok, data.train[:60])
        agent = agent_pass_rates(base_path, res.adapter_dir, data.eval_tasks, args.agent_trials, 6) if args.tasks and args.agent_trials else {}
    info = student_info(base_path)
    row = {
        "student": cfg.model_dump(exclude_defaults=True), "lora": _kv(args.lora), "params": info["n_params"], "vocab": info["vocab"],
        "pretrain_loss": round(info.get("pretrain_loss_last", float("nan")), 3), "build_s": round(t_build, 1),
        "train_s": round(t_train, 1), "steps": res.steps, "tokens": res.train_tokens, "loss": [res.first_train_loss, res.final_train_loss],
        "eval_loss": res.best_eval_loss, "base": b, "adapter": a, "adapter_train_rows": t_train_rows, "agent": agent, "eval_s_per_model": round(t_eval, 1), "cpu_s_total": round(time.process_time() - c0, 1),
    }
    print(json.dumps(row))


if __name__ == "__main__":
    main()
