"""torch threads under load: seconds per training step of the demo student's shape, quiet and beside N busy
processes, with torch's default threads (one per core) and OpenMP's default wait policy (threads spin while they
wait), one thread, and the cores allowed with OMP_WAIT_POLICY=PASSIVE, what the project runs
at under load (env0_posttrain/__init__.py).

Each measurement runs in a fresh process (threads do not carry over), the busy processes are plain Python
loops started before it and stopped after it. The "fair" column is the slowdown a fair share of the CPU would
give the run: with C cores, N busy processes and T threads, (N + T) / C when that is over 1. The machine's own
load (other users) is printed with the table: on a shared machine the quiet rows are not quiet.

    .venv/bin/python bench/threads_under_load_bench.py --busy 2 --steps 12
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time

from tabulate import tabulate

CHILD = r"""
import json, os, sys, time
import torch
from transformers import AutoModelForCausalLM
from env0_posttrain.train.tiny_student.build import TinyStudentConfig, build_model_config
setting, steps = sys.argv[1], int(sys.argv[2])
choice = None
if setting == "project":
    from env0_posttrain.util import torch_threads
    choice = str(torch_threads.apply(torch)) + ", OMP_WAIT_POLICY=" + os.environ.get("OMP_WAIT_POLICY", "")
elif setting != "default":
    torch.set_num_threads(int(setting))
c = TinyStudentConfig()
cfg = build_model_config(c, vocab_size=2000)
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(cfg)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randint(0, 2000, (c.pretrain_batch_size, c.pretrain_seq_len))
times = []
for i in range(steps + 2):  # two warm-up steps
    t0 = time.perf_counter()
    loss = model(input_ids=x, labels=x).loss
    loss.backward(); opt.step(); opt.zero_grad()
    times.append(time.perf_counter() - t0)
print(json.dumps({"threads": torch.get_num_threads(), "s_per_step": sum(times[2:]) / steps, "choice": choice}))
"""


def _spin() -> None:
    while True:
        pass


def measure(setting: str, steps: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "ENV0_TORCH_THREADS", "OMP_WAIT_POLICY")}
    if setting == "project":
        env["OMP_WAIT_POLICY"] = "PASSIVE"  # what importing env0_posttrain sets before torch loads
    out = subprocess.run([sys.executable, "-c", CHILD, setting, str(steps)], capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--busy", type=int, default=None, help="busy processes beside the run (default: the cores)")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--settle-s", type=float, default=2.0, help="wait after starting the busy processes")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    busy = cores if args.busy is None else args.busy
    rows, quiet = [], {}
    for condition in ("quiet", f"{busy} busy"):
        procs = [] if condition == "quiet" else [mp.Process(target=_spin, daemon=True) for _ in range(busy)]
        for p in procs:
            p.start()
        time.sleep(args.settle_s if procs else 0)
        load = os.getloadavg()[0]
        try:
            for setting in ("default", "1", "project"):
                r = measure(setting, args.steps)
                key = setting if setting != "project" else f"project:{r['threads']} passive"
                base = quiet.get(key) if procs else None
                if not procs:
                    quiet[key] = r["s_per_step"]
                n = busy if procs else 0
                fair = max(1.0, (n + r["threads"]) / cores) if procs else None
                rows.append({"condition": condition, "setting": key, "threads": r["threads"],
                             "s/step": r["s_per_step"],
                             "x its quiet": r["s_per_step"] / base if base else None,
                             "fair x": fair, "load (1 min)": load, "choice": r["choice"] or ""})
                print(rows[-1], file=sys.stderr, flush=True)
        finally:
            for p in procs:
                p.kill()
                p.join()
    print(f"{cores} cores allowed, {busy} busy processes in the loaded rows, {args.steps} steps of the demo "
          f"student's shape (batch {8}, seq {256})")
    print(tabulate(rows, headers="keys", floatfmt=".3g"))


if __name__ == "__main__":
    main()
