"""Where a finished run's time went, per stage: wall and CPU seconds from the Dagster event log, as a Markdown table.

Each asset's newest materialization of the run's partition gives its step (wall: the step's start to end in the
run's step stats) and the metadata every step records (`cpu_seconds`: user + system of the step's process and the
children it waited for; `load_average`: the 1-minute load at the step's end, see util/cpu_time.py). The header
names what the digits depend on: the commit of this checkout (the run's, when run where it ran), the CPU and its core count, torch's kernels and the load now. The
table is docs/BENCHMARKS.md's "demo per stage".

    .venv/bin/python bench/demo_stages.py --data-dir data --run-id demo
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
from pathlib import Path

from tabulate import tabulate

from env0_posttrain.util.paths import Paths


def machine_line() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "?") if Path("/proc/cpuinfo").exists() \
        else platform.processor()
    import torch

    return f"{model}, {os.cpu_count()} cores, torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()} " \
           "kernels)"


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent)
    return out.stdout.strip() or "?"


def _value(meta: dict, key: str):
    return getattr(meta[key], "value", meta[key]) if key in meta else None


def stage_rows(data_dir: str, run_id: str) -> list[dict]:
    """One row per asset materialized for `run_id`: its newest materialization's step times and usage."""
    import dagster as dg

    from env0_posttrain.orchestration.launch import instance_for

    rows = []
    with instance_for(Paths.from_env(data_dir)) as instance:
        for key in instance.get_asset_keys():
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=key, asset_partitions=[run_id]), limit=1).records
            if not records:
                continue
            entry = records[0].event_log_entry
            meta = entry.asset_materialization.metadata if entry.asset_materialization else {}
            step = entry.step_key
            stats = [s for s in instance.get_run_step_stats(entry.run_id, step_keys=[step] if step else None)
                     if s.step_key == step]
            start = stats[0].start_time if stats else None
            end = stats[0].end_time if stats else None
            rows.append({"stage": key.to_user_string(), "start": start or 0.0,
                         "wall_s": round(end - start, 1) if start and end else None,
                         "cpu_s": _value(meta, "cpu_seconds"), "load": _value(meta, "load_average")})
    return sorted(rows, key=lambda r: r["start"])


def table(rows: list[dict]) -> str:
    total_wall = sum(r["wall_s"] or 0.0 for r in rows)
    total_cpu = sum(r["cpu_s"] or 0.0 for r in rows)
    body = [[r["stage"], r["wall_s"], r["cpu_s"], f"{100 * (r['wall_s'] or 0) / total_wall:.0f} %" if total_wall
             else "", r["load"]] for r in rows]
    recorded = any(r["cpu_s"] is not None for r in rows)  # runs of code before cpu_seconds was recorded: blank
    body.append(["**all stages**", round(total_wall, 1), round(total_cpu, 1) if recorded else None, "100 %", ""])
    return tabulate(body, headers=["stage", "wall s", "CPU s", "share of wall", "load at its end"],
                    tablefmt="github")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("ENV0_DATA_DIR", "data"))
    ap.add_argument("--run-id", default="demo")
    args = ap.parse_args()
    rows = stage_rows(args.data_dir, args.run_id)
    if not rows:
        raise SystemExit(f"run {args.run_id}: nothing materialized under {args.data_dir}")
    print(f"run {args.run_id} in {args.data_dir}; read at commit {commit()} (the run's commit is the checkout that "
          f"ran it); {machine_line()}; "
          f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(table(rows))


if __name__ == "__main__":
    main()
