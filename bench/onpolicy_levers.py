"""Which on-policy (relabel) settings make the on-policy adapter beat the SFT adapter on the demo's eval tasks,
and at what cost?

Reuses one run whose SFT adapter and SFT / base / teacher evals are materialized (e.g. `run new op0 --preset
demo-onpolicy`, `run materialize op0`, or a finished demo run's data dir copied): per variant it rewrites the run's
`onpolicy:` section, re-materializes only `onpolicy_adapter`, `onpolicy_eval_trajectories` and `comparison_report`,
and prints the report's paired on-policy-vs-SFT figures, the per-family passes (SFT -> on-policy, from the arms'
newest eval rounds), the rounds' teacher agreement and pass rates, the two on-policy steps' wall time, the load
average while they ran and the on-policy adapter's digest (the same spec must give the same digest and digits).
The run's spec stays the one its run was made with (e.g. the demo's) with only its `onpolicy:` section replaced
by the demo-onpolicy preset's section plus the variant's fields.

    python bench/onpolicy_levers.py --data-dir /tmp/op-data --run op0 --variant base= \
        --variant r3=rounds=3 --variant nosft=keep_sft_rows=false --variant kl=kind=reverse_kl,steps_per_round=40
"""

from __future__ import annotations

import argparse
import json
import os
import time

import yaml

from env0_posttrain.making.presets import preset_data
from env0_posttrain.spec.runspec import load_spec, parse_spec, write_spec
from env0_posttrain.util.paths import Paths

STEPS = ("onpolicy_adapter", "onpolicy_eval_trajectories")


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


def family_passes(store, run_id: str, arm: str) -> dict[str, tuple[int, int]]:
    """family -> (passes, episodes) in the arm's newest finished eval round."""
    round_id = store.latest_round(run_id, arm)
    if round_id is None:
        return {}
    rows = store.query("SELECT t.family, sum(CAST(e.passed AS INTEGER)), count(*) FROM episodes e JOIN tasks t "
                       "ON t.run_id = e.run_id AND t.task_id = e.task_id WHERE e.round_id = ? GROUP BY t.family "
                       "ORDER BY t.family", [round_id])
    return {f: (int(k), int(n)) for f, k, n in rows}


def _section(base: dict, sets: dict) -> dict:
    """The preset's section with the variant's fields; a variant of another kind keeps only the round knobs both
    kinds share (the relabel-only fields would be refused by reverse_kl's model, and its own defaults apply)."""
    from env0_posttrain.spec.onpolicy import RelabelSpec, ReverseKLSpec

    kind = sets.get("kind", base.get("kind", "relabel"))
    if kind == base.get("kind", "relabel"):
        return base | sets
    shared = set(RelabelSpec.model_fields) & set(ReverseKLSpec.model_fields) - {"kind", "learning_rate", "temperature"}
    return {k: v for k, v in base.items() if k in shared} | sets


def run_variant(paths: Paths, run_id: str, base: dict, sets: dict) -> dict:
    from env0_posttrain.orchestration.launch import instance_for, materialize_run
    from env0_posttrain.store import Store

    spec = load_spec(paths.spec(run_id))
    data = spec.model_dump(mode="json")
    data["onpolicy"] = _section(base, sets)
    write_spec(parse_spec(data, f"run {run_id!r}"), paths.runs)
    load0 = os.getloadavg()[0]
    with instance_for(paths) as instance:
        done = materialize_run(run_id, paths, instance, [*STEPS, "comparison_report"], log_level="WARNING")
    if not done.success:
        raise SystemExit(f"variant {sets}: materialization failed; see the Dagster logs")
    store = Store(paths.db)
    numbers = json.loads(store.query(
        "SELECT numbers_json FROM reports WHERE run_id = ? ORDER BY created_at DESC LIMIT 1", [run_id])[0][0])
    training = store.latest_training(f"{run_id}:onpolicy") or {}
    extra = sum(v for k, v in done.timings.items() if k.split(".")[0] in STEPS)
    sft, onpolicy = family_passes(store, run_id, "sft"), family_passes(store, run_id, "onpolicy")
    families = ", ".join(f"{f} {sft.get(f, (0, 0))[0]}->{onpolicy.get(f, (0, 0))[0]}/{n}"
                         for f, (_, n) in onpolicy.items())
    return {"numbers": numbers, "extra_s": extra, "timings": done.timings, "load": (load0 + os.getloadavg()[0]) / 2,
            "rounds": (training.get("result") or {}).get("rounds", []), "families": families,
            "revision": (training.get("revision") or "")[:12]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--run", required=True, help="a run with its SFT adapter and its base / sft / teacher evals")
    ap.add_argument("--variant", action="append", required=True, help="name=field=value,... (onpolicy.* fields)")
    args = ap.parse_args()
    paths = Paths.from_env(args.data_dir)
    # Every variant starts from the demo-onpolicy preset's section, never from the run's current one: a variant
    # rewrites the run's spec, so a later invocation reading it back would start from the previous variant.
    base = parse_spec(preset_data("demo-onpolicy", "x")).onpolicy.model_dump(mode="json")
    print("| variant | settings | on-policy pass % | SFT pass % | on-policy - SFT (pp) | 95% CI (pp) | p "
          "| per family, SFT -> on-policy passes | rounds: pass rate / agreement | extra s (wall) | load | adapter |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|")
    for text in args.variant:
        name, sets = _variant(text)
        t0 = time.time()
        r = run_variant(paths, args.run, base, sets)
        n = r["numbers"]
        rounds = "; ".join(f"{x.get('pass_rate', 0):.2f} / {x.get('teacher_agreement') or 0:.2f}" for x in r["rounds"])
        print(f"| {name} | {json.dumps(sets)} | {n.get('onpolicy.pass_rate_pct')} | {n.get('sft.pass_rate_pct')} "
              f"| {n.get('onpolicy_vs_sft.diff_pp')} | {n.get('onpolicy_vs_sft.ci_low_pp')} to "
              f"{n.get('onpolicy_vs_sft.ci_high_pp')} | {n.get('onpolicy_vs_sft.p_value')} | {r['families']} "
              f"| {rounds} | {r['extra_s']:.0f} | {r['load']:.1f} | {r['revision']} |", flush=True)
        print(f"<!-- {name}: wall {time.time() - t0:.0f} s, timings "
              f"{json.dumps({k: round(v) for k, v in r['timings'].items()})} -->", flush=True)


if __name__ == "__main__":
    main()
