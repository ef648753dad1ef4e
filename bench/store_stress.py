"""Store stress: many processes write episodes into one DuckDB file at once; count what was lost.

    .venv/bin/python bench/store_stress.py [--writers 8] [--rows 25] [--trials 3] [--load 0] [--readers 0]
                                           [--reader-pause 0.05]

Each writer opens its own round and writes `rows` episodes, one transaction each, and records every
write that returned. Afterwards the store is counted: rows found, acknowledged writes missing from the
store (lost), keys stored twice (duplicates), and the longest a single write took (max_wait_s: a
writer waiting on the others). `--load N` runs N busy-loop processes beside the writers for the
trial (CPU contention widens any race); `--readers N` adds N processes polling the store read-only,
as the UI and asset checks do, every `--reader-pause` seconds (0: back to back, which can starve a
writer of the lock for minutes: the lock is polled, not queued). Prints one table row per trial.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from env0_posttrain.agent.records import Episode  # noqa: E402
from env0_posttrain.store import Store  # noqa: E402
from env0_posttrain.tasks.model import VerifierResult  # noqa: E402


def _episode(task_id: str) -> Episode:
    return Episode(
        run_id="stress", arm="base", task_id=task_id, trial=0, model="m",
        messages=[{"role": "user", "content": "hi"}], tools=[], stop_condition="agent_completed",
        verifier=VerifierResult(reward=1.0),
    )


def _writer(db: str, prefix: str, n: int, ack_path: str) -> None:
    store = Store(db)
    round_id = store.open_round("stress", prefix, "m", n)
    with open(ack_path, "w") as ack:
        for i in range(n):
            t0 = time.monotonic()
            store.write_episode(round_id, _episode(f"{prefix}{i}"))
            ack.write(f"{prefix}{i} {time.monotonic() - t0:.3f}\n")
            ack.flush()


def _reader(db: str, stop_at: float, pause: float) -> None:
    store = Store(db)
    while time.monotonic() < stop_at:
        store.count_episodes("stress")
        time.sleep(pause)


def _busy(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def trial(writers: int, rows: int, load: int, readers: int, pause: float, workdir: Path) -> dict:
    db = str(workdir / "stress.duckdb")
    Store(db)
    ctx = mp.get_context("spawn")
    acks = [str(workdir / f"ack{i}.txt") for i in range(writers)]
    stop_at = time.monotonic() + 600
    side = [ctx.Process(target=_busy, args=(stop_at,)) for _ in range(load)]
    side += [ctx.Process(target=_reader, args=(db, stop_at, pause)) for _ in range(readers)]
    for p in side:
        p.start()
    t0 = time.monotonic()
    procs = [ctx.Process(target=_writer, args=(db, f"w{i}-", rows, acks[i])) for i in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
    wall = time.monotonic() - t0
    for p in side:
        p.kill()
        p.join()
    lines = [line.split() for a in acks if os.path.exists(a) for line in open(a) if line.strip()]
    acked = [x[0] for x in lines]
    found = Store(db).query("SELECT task_id FROM episodes WHERE run_id = 'stress'")
    found_ids = [r[0] for r in found]
    return {
        "writers": writers, "failed": sum(p.exitcode != 0 for p in procs), "written": len(acked),
        "found": len(found_ids), "lost": len(set(acked) - set(found_ids)),
        "duplicates": len(found_ids) - len(set(found_ids)), "wall_s": wall,
        "max_wait_s": max((float(x[1]) for x in lines), default=0.0),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--rows", type=int, default=25)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--load", type=int, default=0, help="busy-loop processes beside the writers")
    ap.add_argument("--readers", type=int, default=0, help="read-only polling processes beside the writers")
    ap.add_argument("--reader-pause", type=float, default=0.05, help="seconds between a reader's reads")
    args = ap.parse_args()
    print(f"load={args.load} readers={args.readers} reader_pause={args.reader_pause} cpus={os.cpu_count()} "
          f"loadavg={os.getloadavg()[0]:.2f}")
    print(f"{'trial':>5} {'writers':>7} {'failed':>6} {'written':>7} {'found':>6} {'lost':>5} {'dupes':>5} {'wall_s':>7} "
          f"{'max_wait_s':>10}")
    total_lost = 0
    for k in range(args.trials):
        with tempfile.TemporaryDirectory(prefix="store_stress_") as d:
            r = trial(args.writers, args.rows, args.load, args.readers, args.reader_pause, Path(d))
        total_lost += r["lost"]
        print(f"{k:>5} {r['writers']:>7} {r['failed']:>6} {r['written']:>7} {r['found']:>6} {r['lost']:>5} "
              f"{r['duplicates']:>5} {r['wall_s']:>7.1f} {r['max_wait_s']:>10.2f}", flush=True)
    print(f"total lost: {total_lost}")


if __name__ == "__main__":
    main()
