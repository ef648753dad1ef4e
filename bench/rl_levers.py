"""Which GRPO settings make the RL adapter beat the SFT adapter on the demo's eval tasks, and at what cost?

Reuses one run whose SFT adapter and SFT eval are already materialized (e.g. `run new rl0 --preset demo-rl`,
`run materialize rl0`): per variant it rewrites the run's `rl:` section, re-materializes only `rl_adapter`,
`rl_eval_trajectories` and `comparison_report`, and prints the report's paired RL-vs-SFT figures with the
two RL steps' wall time (the RL arm's extra time over the SFT demo) and the load average while it ran.

    python bench/rl_levers.py --data-dir /tmp/rl-data --run rl0 --variant base= \
        --variant lr3e-3=learning_rate=3e-3 --variant t07=temperature=0.7,beta=0.0
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import yaml

from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import load_spec, parse_spec, write_spec
from env0_posttrain.making.presets import preset_data

RL_STEPS = ("rl_adapter", "rl_eval_trajectories")


def _variant(text: str) -> tuple[str, dict]:
    name, _, body = text.partition("=")
    sets = {}
    for item in filter(None, body.split(",")):
        k, v = item.split("=", 1)
        val = yaml.safe_load(v)
        try:  # YAML 1.1 reads 3e-3 as a string
            val = float(val) if isinstance(val, str) else val
        except ValueError:
            pass
        sets[k] = val
    return name, sets


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_variant(paths: Paths, run_id: str, base_rl: dict, sets: dict) -> dict:
    from env0_posttrain.orchestration.launch import instance_for, materialize_run
    from env0_posttrain.store import Store

    spec = load_spec(paths.spec(run_id))
    data = spec.model_dump(mode="json")
    data["rl"] = base_rl | sets
    write_spec(parse_spec(data, f"run {run_id!r}"), paths.runs)
    load0, cpu0 = os.getloadavg()[0], _cpu_s()
    with instance_for(paths) as instance:
        done = materialize_run(run_id, paths, instance, [*RL_STEPS, "comparison_report"], log_level="WARNING")
    timings = done.timings
    if not done.success:
        raise SystemExit(f"variant {sets}: materialization failed; see the Dagster logs")
    numbers = json.loads(Store(paths.db).query(
        "SELECT numbers_json FROM reports WHERE run_id = ? ORDER BY created_at DESC LIMIT 1", [run_id])[0][0])
    cpu = _cpu_s() - cpu0  # the RL steps run in this process: CPU seconds do not grow with other users' load
    extra = sum(v for k, v in timings.items() if k.split(".")[0] in RL_STEPS)
    return {"numbers": numbers, "extra_s": extra, "timings": timings, "load": (load0 + os.getloadavg()[0]) / 2,
            "cpu_s": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--run", required=True, help="a run with SFT adapter and SFT eval materialized")
    ap.add_argument("--variant", action="append", required=True, help="name=field=value,field=value (rl.* fields)")
    args = ap.parse_args()
    paths = Paths.from_env(args.data_dir)
    spec_rl = load_spec(paths.spec(args.run)).rl  # a plain demo run starts from the demo-rl recipe
    base_rl = spec_rl.model_dump() if spec_rl else parse_spec(preset_data("demo-rl", "x")).rl.model_dump()
    print("| variant | settings | RL pass % | SFT pass % | RL - SFT (pp) | 95% CI (pp) | p | RL / SFT mean reward "
          "| extra s (wall) | CPU s | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for text in args.variant:
        name, sets = _variant(text)
        t0 = time.time()
        r = run_variant(paths, args.run, base_rl, sets)
        n = r["numbers"]
        print(f"| {name} | {json.dumps(sets)} | {n.get('rl.pass_rate_pct')} | {n.get('sft.pass_rate_pct')} "
              f"| {n.get('rl_vs_sft.diff_pp')} | {n.get('rl_vs_sft.ci_low_pp')} to {n.get('rl_vs_sft.ci_high_pp')} "
              f"| {n.get('rl_vs_sft.p_value')} | {n.get('rl.mean_reward')} / {n.get('sft.mean_reward')} | {r['extra_s']:.0f} | {r['cpu_s']:.0f} | {r['load']:.1f} |", flush=True)
        print(f"<!-- {name}: wall {time.time() - t0:.0f} s, timings {json.dumps({k: round(v) for k, v in r['timings'].items()})} -->",
              flush=True)


if __name__ == "__main__":
    main()
