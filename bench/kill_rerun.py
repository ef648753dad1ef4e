"""kill -9 of `run materialize` during the teacher rollouts, during LoRA and during an eval, then the same command
again (twice): episodes lost, duplicated and re-collected, training workers left alive, and what the second
rerun still runs. A small offline spec (demo preset, a barely pre-trained tiny student, few steps).

    .venv/bin/python bench/kill_rerun.py [--phases teacher lora eval] [--data /tmp/kill-bench]

Counts per arm, over the whole run: `stored` episodes before the kill, after the rerun; `lost` = stored before
the kill but gone after; `dup` = (task, trial) of one arm stored in more than one round; `recollected` =
episodes of new rounds of an arm whose round had finished before the kill. Wall times depend on the machine's
load (the header prints it): the counts do not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from env0_posttrain.store import Store  # noqa: E402

SETS = ["--preset", "demo", "--set", "tasks.n_train=16", "--set", "tasks.n_eval=6", "--set", "eval.trials=2",
        "--set", "student.pretrain_steps=0", "--set", "lora.max_steps=8", "--set", "lora.logging_steps=1",
        "--set", "teacher.concurrency=2",
        "--set", "eval.concurrency=2"]


def cli(data: Path, *args: str, log: Path | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_DISABLE_TELEMETRY": "1"}
    out = open(log, "w") if log else subprocess.DEVNULL
    return subprocess.Popen([sys.executable, "-m", "env0_posttrain.cli.main", *args, "--data-dir", str(data)], env=env,
                            cwd=str(ROOT), stdout=out, stderr=subprocess.STDOUT, text=True)


def snapshot(store: Store, run: str) -> dict[str, dict]:
    rows = store.query("SELECT e.arm, e.round_id, e.task_id, e.trial, r.status FROM episodes e JOIN rounds r "
                       "USING (round_id) WHERE e.run_id = ?", [run])
    out: dict[str, dict] = {}
    for arm, rid, task, trial, status in rows:
        a = out.setdefault(arm, {"keys": set(), "rounds": {}, "per_key": {}})
        a["keys"].add((rid, task, trial))
        a["rounds"][rid] = status
        a["per_key"][(task, trial)] = a["per_key"].get((task, trial), 0) + 1
    return out


def phase_reached(store: Store, run: str, phase: str) -> bool:
    if phase == "teacher":
        return store.count_episodes(run, "teacher") >= 4
    if phase == "lora":
        return bool(store.query("SELECT 1 FROM training_metrics WHERE run_id = ?", [run]))
    return any(store.count_episodes(run, arm) >= 2 for arm in ("base", "sft", "teacher_eval"))


def workers_alive(data: Path) -> list[int]:
    found = []
    for p in psutil.process_iter(["cmdline", "environ"]):
        try:
            if "env0_posttrain.stages.pipes_worker" in " ".join(p.info["cmdline"] or []):
                found.append(p.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def one(base: Path, phase: str) -> dict:
    data = base / phase
    shutil.rmtree(data, ignore_errors=True)
    run = f"kill-{phase}"
    assert cli(data, "run", "new", run, *SETS).wait() == 0
    store = Store(data / "env0.duckdb")
    first = cli(data, "run", "materialize", run, log=base / f"{phase}-first.log")
    t0 = time.time()
    while first.poll() is None and not phase_reached(store, run, phase):
        time.sleep(0.2)
    if first.poll() is not None:
        raise SystemExit(f"{phase}: the run ended before the phase was reached; see {base}/{phase}-first.log")
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    killed_after = time.time() - t0
    time.sleep(2)
    orphans = workers_alive(data)
    before = snapshot(store, run)
    t1 = time.time()
    rerun = cli(data, "run", "materialize", run, log=base / f"{phase}-rerun.log")
    rc = rerun.wait()
    rerun_s = time.time() - t1
    after = snapshot(store, run)
    third = cli(data, "run", "materialize", run, log=base / f"{phase}-third.log")
    third.wait()
    third_out = (base / f"{phase}-third.log").read_text()
    rows = {}
    for arm in sorted(set(before) | set(after)):
        b, a = before.get(arm, {"keys": set(), "rounds": {}}), after.get(arm, {"keys": set(), "per_key": {}})
        finished_before = {r for r, s in b["rounds"].items() if s == "finished"}
        new_rounds = {rid for rid, _, _ in a["keys"]} - set(b["rounds"])
        rows[arm] = {"stored_before": len(b["keys"]), "stored_after": len(a["keys"]),
                     "lost": len(b["keys"] - a["keys"]),
                     "dup": sum(n - 1 for n in a.get("per_key", {}).values() if n > 1),
                     "recollected": sum(1 for rid, _, _ in a["keys"] if rid in new_rounds) if finished_before else 0}
    return {"phase": phase, "killed_after_s": killed_after, "orphan_workers": orphans, "rerun_rc": rc,
            "rerun_s": rerun_s, "arms": rows, "third_runs_nothing": "nothing to materialize" in third_out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phases", nargs="+", default=["teacher", "lora", "eval"])
    ap.add_argument("--data", type=Path, default=Path("/tmp/kill-bench"))
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| kill during | arm | stored at kill | stored after rerun | lost | duplicated | re-collected |")
    print("|---|---|---:|---:|---:|---:|---:|")
    notes = []
    for phase in args.phases:
        r = one(args.data, phase)
        for arm, c in r["arms"].items():
            print(f"| {phase} | {arm} | {c['stored_before']} | {c['stored_after']} | {c['lost']} | {c['dup']} | "
                  f"{c['recollected']} |")
        notes.append(f"{phase}: killed {r['killed_after_s']:.0f} s in; training workers alive after the kill: "
                     f"{len(r['orphan_workers'])}; rerun rc {r['rerun_rc']} in {r['rerun_s']:.0f} s; a second rerun "
                     f"materialized nothing: {r['third_runs_nothing']}")
    print("\n" + "\n".join(notes))


if __name__ == "__main__":
    main()
