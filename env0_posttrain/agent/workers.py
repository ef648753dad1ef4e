"""Episodes sharded over worker processes: an event loop each, the parent keeps everything else.

One Python process is one core, and litellm alone costs about 2 ms of CPU per call: 64 concurrent
episodes against a 100 ms model ask for ~640 calls/s, more than one core can serve. And a loop
with many slots delays every step: replies that arrive together start their next calls together,
each waiting for the others' CPU, so a few slots per process (about four) beat one process per core
while the cores have room. With
`AgentSettings.processes > 1`, `run_rollouts` hands (task, trial) jobs to worker processes, each
running up to its share of the concurrency on its own asyncio loop, one job at a time per free slot
(so a slow episode never holds a batch back). A worker runs an episode and its refills and sends the
attempts back; the parent does the rest exactly as in-process: accounting, `on_episode` (the single
store writer), the progress bar and the log lines, resume and refill semantics.

Workers are spawned (never forked: the parent may hold threads and locks), pay the litellm import
once, and are kept for the life of the process and reused by later rollouts. A model runs in a
worker only if a fresh process can route it: litellm's own providers, `env0-oracle`, and
`env0-faulty` around one of those. Providers registered at run time (`env0-local`, a test's custom
provider) live only in the parent, so such rollouts run in-process (with a warning).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import os
import pickle
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from env0_posttrain.tasks.model import Task

from .fail_fast import CURRENT as FAIL_FAST
from .fail_fast import FAIL_FAST_EPISODES, FailFast
from .backends.base import Outcome, ShardStats, split_concurrency
from .llm import FatalModelError, litellm, provider_of
from .records import Episode

log = logging.getLogger("env0_posttrain.agent")

START_TIMEOUT_S = 300.0
WORKER_GC_THRESHOLD0 = 20_000
_FRESH_PROCESS_PROVIDERS = ("env0-oracle",)


def routable_in_fresh_process(model: str) -> bool:
    """True when a newly spawned process can serve `model` (no provider registered only at run time)."""
    provider = provider_of(model)
    if provider == "env0-faulty":
        return routable_in_fresh_process(model.split("/", 1)[1])
    if provider in _FRESH_PROCESS_PROVIDERS:
        return True
    runtime = {e.get("provider") for e in litellm.custom_provider_map} - {"env0-faulty", *_FRESH_PROCESS_PROVIDERS}
    return bool(provider) and provider not in runtime and not provider.startswith("env0-")


def shard_refusal(model: str, env: Any) -> str | None:
    """Why this rollout cannot run in worker processes, or None when it can."""
    if not routable_in_fresh_process(model):
        return f"model {model} is served by a provider registered in this process only"
    try:
        pickle.dumps(env)
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the env cannot travel
        return f"environment {type(env).__name__} cannot be sent to a worker ({type(exc).__name__}: {exc})"
    return None


# -- the worker process -----------------------------------------------------------------------
def _worker_main(conn: Any) -> None:
    from . import _install_providers

    _install_providers()
    import env0_posttrain.agent.loop  # noqa: F401 - litellm and the loop, imported before "ready"

    gc.freeze()  # what the imports built lives as long as the worker: never walk it again
    gc.set_threshold(WORKER_GC_THRESHOLD0, *gc.get_threshold()[1:])
    try:
        asyncio.run(_serve(conn))
    except KeyboardInterrupt:
        pass


async def _serve(conn: Any) -> None:
    from .attempts import attempt_episode
    from .providers.faulty import injected_faults
    from .harness_failures import portable

    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue = asyncio.Queue()

    def readable() -> None:
        try:
            while conn.poll():
                inbox.put_nowait(conn.recv())
        except (EOFError, OSError):  # the parent is gone
            loop.remove_reader(conn.fileno())
            inbox.put_nowait(("exit",))

    loop.add_reader(conn.fileno(), readable)
    conn.send(("ready", os.getpid()))
    run: dict[str, Any] = {}
    jobs: dict[int, asyncio.Task] = {}
    cpu0 = time.process_time()
    faults0: Counter = Counter()

    async def job(jid: int, task: Task, trial: int) -> None:
        try:
            attempts, crashed = await attempt_episode(task, trial, run["endpoint"], run["settings"], run["arm"],
                                                      run["run_id"], run["env"])
        except FatalModelError as exc:
            conn.send(("fatal", jid, str(exc), exc.kind, exc.model))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides
            conn.send(("error", jid, f"{type(exc).__name__}: {exc}"))
        else:  # as JSON: the parent validates it ~7x faster than it unpickles pydantic models
            conn.send(("result", jid, [portable(ep) for ep in attempts], crashed))
        finally:
            jobs.pop(jid, None)

    async def stop_jobs() -> None:
        live = list(jobs.values())
        for j in live:
            j.cancel()
        await asyncio.gather(*live, return_exceptions=True)

    while True:
        msg = await inbox.get()
        kind = msg[0]
        if kind == "run":
            run = msg[1]
            FAIL_FAST.set(FailFast(episodes=run.get("fail_fast_episodes", FAIL_FAST_EPISODES)))  # jobs below share it
            cpu0, faults0 = time.process_time(), Counter(injected_faults())
        elif kind == "job":
            _, jid, task, trial = msg
            jobs[jid] = asyncio.ensure_future(job(jid, task, trial))
        elif kind in ("end", "cancel"):
            await stop_jobs()  # "end" comes after every job has answered: nothing is left to stop
            faults = Counter(injected_faults())
            faults.subtract(faults0)
            conn.send(("ended", time.process_time() - cpu0, {k: v for k, v in faults.items() if v}))
        elif kind == "exit":
            await stop_jobs()
            return


# -- the parent side ----------------------------------------------------------------------------
@dataclass
class _Worker:
    process: Any
    conn: Any
    capacity: int = 0
    busy: int = 0


@dataclass
class WorkerPool:
    """Spawned worker processes with a duplex pipe each; one rollout at a time uses a pool."""

    size: int
    workers: list[_Worker] = field(default_factory=list)
    broken: bool = False

    def start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        for _ in range(self.size):
            parent, child = ctx.Pipe(duplex=True)
            p = ctx.Process(target=_worker_main, args=(child,), name="env0-rollout-worker", daemon=True)
            p.start()
            child.close()
            self.workers.append(_Worker(p, parent))
        deadline = time.monotonic() + START_TIMEOUT_S
        for w in self.workers:
            if not w.conn.poll(max(0.0, deadline - time.monotonic())):
                self.close()
                raise RuntimeError(f"rollout worker {w.process.pid} did not start in {START_TIMEOUT_S:.0f}s")
            msg = w.conn.recv()
            if msg[0] != "ready":
                self.close()
                raise RuntimeError(f"rollout worker {w.process.pid} sent {msg[0]!r} instead of 'ready'")

    def alive(self) -> bool:
        return not self.broken and all(w.process.is_alive() for w in self.workers)

    def close(self) -> None:
        self.broken = True
        for w in self.workers:
            try:
                w.conn.send(("exit",))
            except (OSError, ValueError):
                pass
        for w in self.workers:
            w.process.join(timeout=5)
            if w.process.is_alive():
                w.process.kill()
                w.process.join(timeout=5)
            w.conn.close()


_POOLS_LOCK = threading.Lock()
_IDLE_POOLS: list[WorkerPool] = []


def acquire_pool(size: int) -> WorkerPool:
    """An idle pool of `size` workers (started the first time; later rollouts reuse it)."""
    with _POOLS_LOCK:
        for i, pool in enumerate(_IDLE_POOLS):
            if pool.size == size and pool.alive():
                return _IDLE_POOLS.pop(i)
        dead = [p for p in _IDLE_POOLS if not p.alive()]
        for p in dead:
            _IDLE_POOLS.remove(p)
    for p in dead:
        p.close()
    pool = WorkerPool(size)
    pool.start()
    return pool


def release_pool(pool: WorkerPool) -> None:
    if pool.alive():
        with _POOLS_LOCK:
            _IDLE_POOLS.append(pool)
    else:
        pool.close()


def shutdown_pools() -> None:
    """Stop every idle worker process (they are daemons: they also end with this process)."""
    with _POOLS_LOCK:
        pools = list(_IDLE_POOLS)
        _IDLE_POOLS.clear()
    for p in pools:
        p.close()


async def run_sharded(todo: list[tuple[Task, int]], processes: int, run: dict[str, Any],
                      deliver: Callable[[Task, int, Outcome], Awaitable[None]]) -> ShardStats:
    """Run every (task, trial) of `todo` in worker processes; `deliver` each outcome in the parent."""
    capacities = split_concurrency(run["settings"].concurrency, min(processes, len(todo)))
    pool = acquire_pool(len(capacities))
    stats = ShardStats(processes=len(capacities))
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue = asyncio.Queue()
    registered: list[int] = []
    ok = False

    def reader(i: int, conn: Any) -> Callable[[], None]:
        def readable() -> None:
            try:
                while conn.poll():
                    inbox.put_nowait((i, conn.recv()))
            except (EOFError, OSError):
                loop.remove_reader(conn.fileno())
                inbox.put_nowait((i, ("died",)))
        return readable

    try:
        for i, (w, cap) in enumerate(zip(pool.workers, capacities)):
            w.capacity, w.busy = cap, 0
            loop.add_reader(w.conn.fileno(), reader(i, w.conn))
            registered.append(w.conn.fileno())
            w.conn.send(("run", {**run, "fail_fast_episodes": min(FAIL_FAST_EPISODES, cap, len(todo))}))
        pending = list(reversed(todo))
        jobs: dict[int, tuple[Task, int]] = {}
        next_id = 0

        def dispatch() -> None:
            nonlocal next_id
            while pending:
                w = max(pool.workers[: len(capacities)], key=lambda w: w.capacity - w.busy)
                if w.busy >= w.capacity:
                    return
                task, trial = pending.pop()
                jobs[next_id] = (task, trial)
                w.busy += 1
                w.conn.send(("job", next_id, task, trial))
                next_id += 1

        dispatch()
        while jobs:
            i, msg = await inbox.get()
            kind = msg[0]
            if kind == "died":
                raise RuntimeError(f"rollout worker {pool.workers[i].process.pid} died; finished episodes are kept")
            if kind == "fatal":
                raise FatalModelError(*msg[2:5])
            if kind == "error":
                raise RuntimeError(f"rollout worker {pool.workers[i].process.pid}: {msg[2]}")
            _, jid, attempts_json, crashed = msg
            attempts = [Episode.model_validate_json(a) for a in attempts_json]
            task, trial = jobs.pop(jid)
            pool.workers[i].busy -= 1
            dispatch()  # keep the worker busy while the parent writes
            await deliver(task, trial, (attempts, crashed))
        ok = True
    finally:
        stop = "end" if ok else "cancel"
        answered: set[int] = set()
        try:
            for w in pool.workers[: len(capacities)]:
                w.conn.send((stop,))
            deadline = time.monotonic() + 30
            while len(answered) < len(capacities) and time.monotonic() < deadline:
                try:
                    i, msg = await asyncio.wait_for(inbox.get(), timeout=max(0.01, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    break
                if msg[0] == "ended":
                    answered.add(i)
                    stats.cpu_s += msg[1]
                    stats.faults.update(msg[2])
                elif msg[0] == "died":
                    break
        except (OSError, ValueError):
            pass
        for fd in registered:
            loop.remove_reader(fd)
        if len(answered) < len(capacities):
            pool.broken = True
        release_pool(pool)
    return stats
