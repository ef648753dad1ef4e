"""Episodes played by Ray actors: the same seam as the worker processes (backends/base.py), across machines.

`scale.backend: ray` hands a round's (task, trial) jobs to `processes` async Ray actors, each playing up to its
share of the concurrency (`max_concurrency`) on its own event loop: whole episodes, the agent loop, the workspace,
the sandbox and the verifier, exactly as a worker process does. Each outcome comes back to the driver as JSON and
goes through the same `deliver` (accounting, `on_episode`, progress), so the step process stays the store's only
writer and rounds, refills, fail-fast, budgets and resume behave as with processes.

What travels: tasks as values (pydantic models), the endpoint (a model id and the *name* of its key variable),
the settings and the task environment. A key never travels: an actor reads the variable from its own environment,
which the cluster's operator sets (a Kubernetes Secret in deploy/ray/; a local Ray started here inherits this
process's environment). An actor without it stops the round with `missing_key`, naming where to set it.

Once per step, not per round: the first round of a process starts (or joins) Ray and its actors; a round that ends
well hands its actors back idle (`release_actors`) and the next round of the same process reuses them, as the worker
processes are reused. Each round sends its settings once (`ray.put`) under a round tag; an actor takes them, with a
fresh FailFast and CPU count, when the first job of a new tag reaches it (a restarted actor too). Ray and the idle
actors stop when the process exits (`shutdown_ray`, at exit): a Dagster step is a process, so nothing outlives it.

Faults: an actor that dies (killed, out of memory, its node removed) is restarted by Ray (`max_restarts`); the jobs
it held are sent again by the driver, and only a returned outcome is delivered, so every (task, trial) is stored
once; such a round's actors are not reused (a later round starts fresh ones, with their restarts unspent). A round
that fails or is cancelled (Ctrl-C) kills every actor of this process and shuts down the local Ray it started.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import re
import threading
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from env0_posttrain.spec.section import Section

from .base import Deliver, Job, RoundRun, ShardStats, split_concurrency

if TYPE_CHECKING:
    from env0_posttrain.tasks.model import Task

    from ..endpoint import AgentSettings

log = logging.getLogger("env0_posttrain.agent")

NAMESPACE = "env0-posttrain"
ACTOR_PREFIX = "env0-rollout-"
ACTOR_MAX_RESTARTS = 4  # per actor and round (reused only after a round without deaths): not a crash loop
MAX_RESENDS = 4  # per (task, trial): jobs whose actor died under them more often than this fail the round
# An actor Ray is restarting answers at once with ActorUnavailableError: not a death, so its jobs wait for it (its new
# process imports torch, seconds on a busy host) for at most this long before the round fails.
RESTART_WAIT_S = 300.0
LOCAL_OBJECT_STORE_BYTES = 128 * 2**20  # outcomes are small JSON; Ray's default would reserve 30 % of the RAM
INSTALL_HINT = "scale.backend ray needs Ray: pip install -c constraints.txt -e '.[ray]'"
RAY_CLIENT_ADDRESS = re.compile(r"^ray://[A-Za-z0-9._-]+:[0-9]{1,5}$")


class RaySettings(Section):
    """`scale.backend: {kind: ray, ...}`: Ray actors, `processes` of them, each playing its share of the concurrency."""

    kind: Literal["ray"] = "ray"
    address: str | None = Field(default=None, description="None = a local Ray started for the round on the cores this "
                                "process may use (and stopped after it); 'auto' = the cluster this machine belongs to; "
                                "'ray://host:port' = a cluster's Ray Client address (KubeRay's head service, deploy/ray/)")

    @field_validator("address")
    @classmethod
    def _address(cls, v: str | None) -> str | None:
        if v is None or v == "auto" or RAY_CLIENT_ADDRESS.fullmatch(v):
            return v
        raise ValueError(f"ray address {v!r}: use null (a local Ray), 'auto' or 'ray://host:port'")


class RolloutActor:
    """One Ray actor: whole episodes on its event loop, each outcome returned as JSON (never raised: Ray would wrap
    the error, and the driver decides what a failure means). It serves one round at a time and is reused by the
    next: a job carries its round's tag and a reference to the round's settings, taken once per tag."""

    def __init__(self) -> None:
        from .. import _install_providers
        from ..fail_fast import FailFast

        _install_providers()
        import env0_posttrain.agent.loop  # noqa: F401 - litellm and the loop, imported before the first job

        self.tag: str | None = None
        self.run: dict[str, Any] = {}
        self.fail_fast = FailFast()
        self.cpu0, self.faults0 = time.process_time(), Counter()
        self.switch = asyncio.Lock()

    async def _enter(self, tag: str, run_ref: list) -> None:
        """The round `tag`'s settings (fetched once), a FailFast of its own (over at most this actor's slots in the
        round: `run_ref` is [the settings' reference, those slots]) and its CPU and faults counted from 0."""
        from ..fail_fast import FailFast
        from ..providers.faulty import injected_faults

        async with self.switch:  # the round's first jobs arrive together: one fetch
            if self.tag == tag:
                return
            run = await run_ref[0]
            self.run, self.fail_fast = run, FailFast(episodes=min(run["fail_fast_episodes"], run_ref[1]))
            self.cpu0, self.faults0 = time.process_time(), Counter(injected_faults())
            self.tag = tag

    async def play(self, tag: str, run_ref: list, task: Task, trial: int) -> tuple:
        from ..attempts import attempt_episode
        from ..fail_fast import CURRENT as FAIL_FAST
        from ..harness_failures import portable
        from ..llm import FatalModelError

        if self.tag != tag:
            await self._enter(tag, run_ref)
        run = self.run
        FAIL_FAST.set(self.fail_fast)  # this call's context: the episode's tasks share the round's one FailFast
        try:
            run["endpoint"].completion_kwargs()
        except ValueError as err:  # the driver had the key, this node has not
            return ("fatal", f"{err} on Ray node {_node()}: set it in the cluster's environment (docs/RAY.md)",
                    "missing_key", run["endpoint"].model)
        try:
            attempts, crashed = await attempt_episode(task, trial, run["endpoint"], run["settings"], run["arm"],
                                                      run["run_id"], run["env"])
        except FatalModelError as exc:
            return ("fatal", str(exc), exc.kind, exc.model)
        except Exception as exc:  # noqa: BLE001 - reported to the driver, which fails the round
            return ("error", f"{type(exc).__name__}: {exc}")
        return ("result", [portable(ep) for ep in attempts], crashed)

    def stats(self, tag: str | None = None) -> tuple[float, dict[str, int], int]:
        """CPU seconds spent, faults injected (env0-faulty) and the pid, in round `tag` (since this actor (re)started
        or took that round's first job; nothing when `tag` is not the round it serves)."""
        from ..providers.faulty import injected_faults

        if tag is not None and tag != self.tag:
            return 0.0, {}, os.getpid()
        faults = Counter(injected_faults())
        faults.subtract(self.faults0)
        return time.process_time() - self.cpu0, {k: v for k, v in faults.items() if v}, os.getpid()


def _node() -> str:
    import ray

    try:
        return ray.get_runtime_context().get_node_id()[:12]
    except Exception:  # noqa: BLE001 - only for a message
        return "?"


_LOCK = threading.Lock()
_SESSION: dict[str, Any] = {}  # the Ray this process connected itself to: {"address": ...}; empty if none
_AT_EXIT: list[bool] = []


def connect(address: str | None) -> bool:
    """Join `address` (None: start a new local Ray on the cores this process may use, never one already running on
    this machine, which `ray.init()` alone would join), once per process: later rounds find it connected. True when
    this call started or joined Ray (`shutdown_ray` stops it, at the latest when the process exits); False when this
    process was already connected (by an earlier round, or by its caller, whose Ray is left alone)."""
    try:
        import ray
    except ImportError as err:
        raise RuntimeError(f"{INSTALL_HINT} ({err})") from None
    with _LOCK:
        if not _AT_EXIT:  # registered after Ray's own exit handler, so it runs before it (last in, first out)
            atexit.register(shutdown_ray)
            _AT_EXIT.append(True)
        if ray.is_initialized():
            if not _SESSION or _SESSION["address"] == address:
                return False
        else:
            _SESSION.clear()
    if _SESSION:  # connected by an earlier round to another address: leave it for this one
        shutdown_ray()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with _LOCK:
        if address is None:
            ray.init(address="local", num_cpus=len(os.sched_getaffinity(0)),
                     object_store_memory=LOCAL_OBJECT_STORE_BYTES, include_dashboard=False, namespace=NAMESPACE,
                     log_to_driver=False)
        else:
            ray.init(address=address, namespace=NAMESPACE, log_to_driver=False)
        _SESSION["address"] = address
    return True


@dataclass
class ActorSet:
    """Rollout actors of one Ray session; one round at a time uses a set, later rounds of this process reuse it."""

    session: tuple[str, str]  # (Ray session name, job id): handles are valid in this connection only
    handles: list[Any]
    capacities: list[int]  # each actor's max_concurrency

    def fits(self, session: tuple[str, str], capacities: list[int]) -> bool:
        return (session == self.session and len(self.handles) >= len(capacities)
                and all(have >= want for have, want in zip(self.capacities, capacities)))

    def kill(self) -> None:
        import ray

        for h in self.handles:
            try:
                ray.kill(h, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone, or its Ray is
                pass


_IDLE: list[ActorSet] = []


def _session() -> tuple[str, str]:
    import ray

    ctx = ray.get_runtime_context()
    return ctx.get_session_name(), ctx.get_job_id()


def acquire_actors(capacities: list[int]) -> tuple[ActorSet, bool]:
    """An idle set of actors that fits `capacities` on the connected Ray, or a new one (then True); an idle set that
    does not fit is killed first, so that its CPUs are free for the new one."""
    import ray

    session = _session()
    with _LOCK:
        for i, idle in enumerate(_IDLE):
            if idle.fits(session, capacities):
                return _IDLE.pop(i), False
        stale = list(_IDLE)
        _IDLE.clear()
    for idle in stale:
        if idle.session == session:
            idle.kill()
    cpus = ray.cluster_resources().get("CPU", 1.0)
    actor_cls = ray.remote(RolloutActor)
    tag = uuid.uuid4().hex[:8]
    handles = [actor_cls.options(
        name=f"{ACTOR_PREFIX}{tag}-{i}", namespace=NAMESPACE, max_concurrency=cap,
        max_restarts=ACTOR_MAX_RESTARTS, max_task_retries=0, num_cpus=min(1.0, cpus / len(capacities)),
        scheduling_strategy="SPREAD",
    ).remote() for i, cap in enumerate(capacities)]
    return ActorSet(session, handles, list(capacities)), True


def release_actors(actors: ActorSet) -> None:
    """Hand a set back idle after a round that ended well, for the next round of this process."""
    with _LOCK:
        _IDLE.append(actors)


def shutdown_ray() -> None:
    """Kill this process's idle rollout actors and stop the Ray it connected itself to (a Ray its caller connected
    is left running). Called at exit; a step or a test may call it sooner."""
    with _LOCK:
        idle = list(_IDLE)
        _IDLE.clear()
        ours = bool(_SESSION)
        _SESSION.clear()
    try:
        import ray
    except ImportError:
        return
    if not ray.is_initialized():
        return
    for actors in idle:
        actors.kill()
    if ours:
        ray.shutdown()


async def run_on_ray(todo: list[Job], actors: int, run: RoundRun | dict[str, Any], address: str | None,
                     deliver: Deliver) -> ShardStats:
    """Run every (task, trial) of `todo` on `actors` Ray actors; `deliver` each outcome here, once."""
    connect(address)
    import ray
    from ray.exceptions import ActorUnavailableError, RayActorError

    from ..fail_fast import FAIL_FAST_EPISODES
    from ..llm import FatalModelError  # litellm and the tasks: imported when a round plays, not when a spec reads this
    from ..records import Episode

    capacities = split_concurrency(run["settings"].concurrency, min(actors, len(todo)))
    stats = ShardStats(processes=len(capacities))
    inflight: dict[asyncio.Future, tuple[int, int]] = {}
    actor_set, new = acquire_actors(capacities)
    log.info("ray round of %d jobs on %d actors (%s)", len(todo), len(capacities),
             "started now" if new else "reused from this step's earlier round")
    handles = actor_set.handles[: len(capacities)]
    tag = uuid.uuid4().hex[:8]  # this round: its actors take `run` once, with a FailFast of its own
    settings_ref = ray.put({**run, "fail_fast_episodes": min(FAIL_FAST_EPISODES, len(todo))})
    refs = [[settings_ref, cap] for cap in capacities]  # in a list, so that Ray does not resolve it for every job
    ended_well = False
    try:
        jobs = dict(enumerate(todo))
        sends: Counter = Counter()
        deaths: Counter = Counter()
        unavailable_since: dict[int, float] = {}
        pending = deque(jobs)
        busy = [0] * len(handles)

        def dispatch() -> None:
            while pending:
                i = min(range(len(handles)), key=lambda i: busy[i] - capacities[i])
                if busy[i] >= capacities[i]:
                    return
                jid = pending.popleft()
                task, trial = jobs[jid]
                sends[jid] += 1
                busy[i] += 1
                inflight[asyncio.wrap_future(handles[i].play.remote(tag, refs[i], task, trial).future())] = (jid, i)

        dispatch()
        while jobs:
            done, _ = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
            outcomes = []
            restarting = False
            for fut in done:
                jid, i = inflight.pop(fut)
                busy[i] -= 1
                try:
                    msg = fut.result()
                except RayActorError as err:  # the actor died under the job: Ray restarts it, the job is sent again
                    if isinstance(err, ActorUnavailableError):  # still restarting: wait for it, bounded by time
                        first = unavailable_since.setdefault(jid, time.monotonic())
                        if time.monotonic() - first > RESTART_WAIT_S:
                            raise RuntimeError(f"ray rollout actor {i} stayed unavailable for {RESTART_WAIT_S:.0f} s "
                                               f"under {jobs[jid][0].id}:{jobs[jid][1]}; finished episodes are kept"
                                               ) from err
                        restarting = True
                    else:
                        deaths[jid] += 1
                    if deaths[jid] > MAX_RESENDS:
                        raise RuntimeError(f"ray rollout actor died under {jobs[jid][0].id}:{jobs[jid][1]} "
                                           f"{deaths[jid]} times; finished episodes are kept") from err
                    log.warning("ray rollout actor %d lost %s:%d (%s); sending it again", i, jobs[jid][0].id,
                                jobs[jid][1], type(err).__name__)
                    stats.resent += 1
                    pending.appendleft(jid)
                    continue
                if msg[0] == "fatal":
                    raise FatalModelError(*msg[1:4])
                if msg[0] == "error":
                    raise RuntimeError(f"ray rollout actor {i}: {msg[1]}")
                outcomes.append((jid, msg))
            if restarting:
                await asyncio.sleep(0.5)  # give the restarting actor a moment instead of spinning on its refusals
            dispatch()  # keep the actors busy while this process writes
            for jid, (_, attempts_json, crashed) in outcomes:
                task, trial = jobs.pop(jid)
                await deliver(task, trial, ([Episode.model_validate_json(a) for a in attempts_json], crashed))
        for cpu_s, faults, _pid in ray.get([h.stats.remote(tag) for h in handles], timeout=60):
            stats.cpu_s += cpu_s
            stats.faults.update(faults)
        ended_well = True
    finally:
        for fut in inflight:
            fut.cancel()
        if ended_well and not stats.resent:  # an actor died this round: its restarts are spent, start fresh ones
            release_actors(actor_set)
        else:
            actor_set.kill()
        if not ended_well:  # failed or cancelled (Ctrl-C): nothing of this process's Ray is left running
            shutdown_ray()
    return stats


class RayRollouts:
    """`processes` Ray actors at `scale.backend.address`; a round of one job goes there too."""

    name: ClassVar[str] = "ray"
    settings: ClassVar[type[Section]] = RaySettings

    def leaves_process(self, settings: AgentSettings, jobs: int) -> bool:
        return jobs > 0

    async def play(self, todo: list[Job], run: RoundRun, deliver: Deliver) -> ShardStats:
        settings = run["settings"]
        backend = settings.scale.backend
        address = backend.address if isinstance(backend, RaySettings) else None
        return await run_on_ray(todo, settings.processes, run, address, deliver)


RAY = RayRollouts()
