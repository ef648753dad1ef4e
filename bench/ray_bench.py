"""Ray backend benchmark: episodes per second for worker processes vs Ray actors on this machine, Ray's overhead per
episode, and what one driver (the step process, the store's only writer) can absorb per second.

    .venv/bin/python bench/ray_bench.py [--episodes 64] [--concurrency 8] [--processes 2] [--latency 0.1]
                                        [--nodes 10 --cores 16]

The episodes are the oracle teacher with a fixed model latency (`env0_latency_s`) on the built-in workspace, its
tools and verifiers, the same for both backends. Both backends start once per process (a Dagster step) and reuse
what they started in later rounds: the worker processes, and a local Ray with its actors. The first round of each
(no latency) pays that start, printed as "start, once per step" (the first round's wall less a second, warm one of
the same size); the timed rounds find them warm, as a step's later rounds do. Each backend plays a round of N/2 and
one of N episodes: the difference, per extra episode, is the steady cost without any start-up, and the rest of the
N round is the fixed cost per round.

The driver rows time what the step process does per episode whatever the backend: validate the returned JSON into
an Episode and write it to DuckDB in batches (episode_writer's one transaction per queued batch). Their inverse is
the most episodes per second one driver can absorb; the cluster line compares it with what `--nodes` x `--cores`
cores play (each episode costs the CPU measured on the actors here, its wall time the model's latency x steps).
The header prints the load average: figures are comparable only at a similar load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts  # noqa: E402
from env0_posttrain.agent.records import Episode  # noqa: E402
from env0_posttrain.spec.scale import ScaleSpec  # noqa: E402
from env0_posttrain.tasks import generate_tasks  # noqa: E402


async def one_round(tasks, backend: str, concurrency: int, processes: int, latency: float) -> tuple[float, object, list]:
    settings = AgentSettings(max_steps=40, concurrency=concurrency, processes=processes,
                             scale=ScaleSpec(backend=backend))
    eps: list = []
    t0 = time.perf_counter()
    summary = await run_rollouts(tasks, "teacher", 1, oracle_endpoint(latency_s=latency), settings, f"bench-{backend}",
                                 set(), eps.append, progress=False)
    return time.perf_counter() - t0, summary, eps


def driver_costs(episodes: list[Episode], batch: int) -> dict[str, float]:
    """Seconds per episode the driver spends: JSON -> Episode, and DuckDB writes `batch` at a time."""
    from env0_posttrain.spec.runspec import parse_spec
    from env0_posttrain.store import Store

    blobs = [e.model_dump_json() for e in episodes]
    t0 = time.perf_counter()
    parsed = [Episode.model_validate_json(b) for b in blobs]
    validate = (time.perf_counter() - t0) / len(blobs)
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d) / "bench.duckdb")
        store.upsert_run(parse_spec({"run_id": "bench"}))
        round_id = store.open_round("bench", "teacher", "m", len(parsed))
        renamed = [e.model_copy(update={"run_id": "bench", "trial": i}) for i, e in enumerate(parsed)]
        t0 = time.perf_counter()
        for i in range(0, len(renamed), batch):
            store.write_episodes(round_id, renamed[i:i + batch])
        write = (time.perf_counter() - t0) / len(renamed)
    return {"validate_s": validate, "write_s": write}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--cores", type=int, default=16)
    args = ap.parse_args()
    tasks = generate_tasks(0, per_template=-(-args.episodes // 100))[: args.episodes]
    c, p, lat = args.concurrency, args.processes, args.latency

    half = len(tasks) // 2
    rows: dict[str, dict] = {}
    for backend in ("processes", "ray"):  # a round of N/2 and one of N: their difference has no start-up in it
        cold = await one_round(tasks[: 2 * p], backend, c, p, 0.0)  # starts the pool / Ray and its actors
        warm = await one_round(tasks[: 2 * p], backend, c, p, 0.0)  # the same round again: they are reused
        small = await one_round(tasks[:half], backend, c, p, lat)
        full = await one_round(tasks, backend, c, p, lat)
        rows[backend] = {"wall": full[0], "eps": full[2], "summary": full[1],
                         "per_ep": (full[0] - small[0]) / (len(tasks) - half),
                         "cpu_per_ep": (full[1].worker_cpu_s - small[1].worker_cpu_s) / (len(tasks) - half)}
        rows[backend]["fixed"] = full[0] - len(tasks) * rows[backend]["per_ep"]
        rows[backend]["start"] = cold[0] - warm[0]

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nray vs processes: rounds of {half} and {len(tasks)} oracle episodes, concurrency {c}, {p} processes / "
          f"actors, model latency {lat * 1000:.0f} ms, cpus {len(os.sched_getaffinity(0))}, load average (1/5/15 min) "
          f"{load}")
    steps = sum(len(e.exchanges) for e in rows["processes"]["eps"]) / len(tasks)
    print(f"| backend | round of {len(tasks)}: wall s | episodes/s | per extra episode: wall ms | episodes/s | CPU ms "
          "(workers / actors) | fixed per round s | start, once per step s |")
    print("|---|---|---|---|---|---|---|---|")
    for backend, r in rows.items():
        print(f"| {backend} | {r['wall']:.2f} | {len(tasks) / r['wall']:.2f} | {1000 * r['per_ep']:.1f} | "
              f"{1 / r['per_ep']:.2f} | {1000 * r['cpu_per_ep']:.1f} | {r['fixed']:.2f} | {r['start']:.2f} |")
    d = rows["ray"]["per_ep"] - rows["processes"]["per_ep"]
    added = rows["ray"]["wall"] - rows["processes"]["wall"]
    print(f"\n{steps:.1f} steps per episode. Ray's overhead per episode (the rounds' difference): {1000 * d:+.1f} ms "
          f"({100 * d / rows['processes']['per_ep']:+.1f} % of the processes backend's), "
          f"{rows['ray']['fixed'] - rows['processes']['fixed']:+.2f} s fixed per round; a warm round of {len(tasks)} "
          f"adds {added:+.2f} s over processes (goal: at most 2 s: {'met' if added <= 2.0 else 'NOT met'}); "
          f"starting Ray once per step costs {rows['ray']['start'] - rows['processes']['start']:+.2f} s more than "
          "starting the worker processes")

    eps = rows["ray"]["eps"]
    costs = {b: driver_costs(eps, b) for b in (1, 16, 64)}
    print("\n| driver, per episode | ms |")
    print("|---|---|")
    print(f"| JSON -> Episode (validate) | {1000 * costs[1]['validate_s']:.2f} |")
    for b, cost in costs.items():
        print(f"| DuckDB write, {b} per transaction | {1000 * cost['write_s']:.2f} |")
    driver_s = costs[16]["validate_s"] + costs[16]["write_s"]
    cpu_per_episode = rows["ray"]["cpu_per_ep"]
    cores = args.nodes * args.cores
    cluster = cores / cpu_per_episode if cpu_per_episode else float("inf")
    print(f"\n{args.nodes} nodes x {args.cores} cores, CPU-bound at {1000 * cpu_per_episode:.0f} ms CPU per episode: "
          f"{cluster:.0f} episodes/s; one driver absorbs {1 / driver_s:.0f} episodes/s (16 per write): the driver "
          f"{'is' if cluster > 1 / driver_s else 'is not'} the bottleneck ({cluster * driver_s:.0%} of its core)")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    finally:
        from env0_posttrain.agent.backends.ray import shutdown_ray
        from env0_posttrain.agent.workers import shutdown_pools

        shutdown_ray()
        shutdown_pools()
