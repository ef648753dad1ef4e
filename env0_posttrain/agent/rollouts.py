"""Many episodes at once: bounded concurrency, resume, refill of infra failures, accounting.

Each finished episode is handed to `on_episode` at once (the store writes it there), so a killed
process loses only episodes in flight; a rerun with the stored keys as `done_keys` runs only the
rest. An episode that ended on infrastructure is re-run (up to `max_refills` times) and only a
healthy one is handed over: one canonical trajectory per task and trial.

Every episode played is counted, here in `deliver` whichever backend played it (this process, the worker
processes, a later one behind the same seam): it is handed over (stored; one the harness failed around is stored
too, harness_failures.py) or counted as failed (still failing on infrastructure after its refills; its round
stays open). `RolloutSummary.check_counts` holds that stored + counted as failed = played, once per rollout.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import logging
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any

from pydantic import BaseModel, Field
from env0_posttrain.tasks.model import Task
from env0_posttrain.util.progress_log import LoggedBar

from .attempts import attempt_episode
from .backends import backend_for
from .backends.base import RoundRun
from .endpoint import AgentSettings, ModelEndpoint
from .environment import DEFAULT_ENV, TaskEnv
from .fail_fast import FAIL_FAST_EPISODES, fail_fast_scope
from .harness_failures import HARNESS_FAILURES, not_started
from .llm import FatalModelError
from .providers.lockstep import LANE, MODEL_DONE, Lanes, wants_lanes
from .loop import STEERABLE_ARMS
from .records import Arm, Episode, TokenUsage
from .workers import shard_refusal

log = logging.getLogger("env0_posttrain.agent")

OnEpisode = Callable[[Episode], Any]


class RolloutSummary(BaseModel):
    run_id: str
    arm: str
    model: str
    surface: str = Field(default="tools", description="what the agent acted through (tools, shell, both)")
    planned: int = Field(description="task x trial pairs asked for")
    skipped: int = Field(description="already in done_keys")
    played: int = Field(default=0, description="episodes this rollout played: planned - skipped")
    completed: int = Field(description="episodes handed to on_episode (stored), those the harness failed around too")
    passed: int = 0
    mean_reward: float | None = None
    stop_conditions: dict[str, int] = Field(default_factory=dict)
    refills: int = Field(default=0, description="episodes re-run after ending on infra errors")
    infra_failed: list[str] = Field(default_factory=list, description="task:trial still failing after all refills: "
                                    "not stored, counted as failed (the round stays open for them)")
    crashed: list[str] = Field(default_factory=list, description="task:trial: why, whose set-up failed before the "
                               "agent acted (environment bugs); stored as environment_error episodes")
    harness_failures: dict[str, int] = Field(default_factory=dict, description="stored episodes the harness failed "
                                             "around, by where (harness_failures.HARNESS_FAILURES)")
    infra_errors: int = 0
    agent_errors: int = 0
    error_counts: dict[str, int] = Field(default_factory=dict, description="every error by kind, refilled runs too")
    model_calls: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    duration_s: float = 0.0
    backend: str = Field(default="this process", description="where the episodes ran: this process, or the name of "
                         "the backend that played them (scale.backend.kind: processes, ray)")
    processes: int = Field(default=1, description="processes (or Ray actors) the episodes ran in (1: this one)")
    resent: int = Field(default=0, description="jobs sent again after the Ray actor holding them died (each stored once)")
    worker_cpu_s: float = Field(default=0.0, description="CPU seconds the worker processes spent (0 in-process)")

    @property
    def unscored(self) -> int:
        return (self.stop_conditions.get("verifier_error", 0) + self.stop_conditions.get("environment_error", 0)
                + len(self.infra_failed))

    @property
    def counted_failed(self) -> int:
        """Played but not stored: each counts as a fail of the round, which stays open until they are played."""
        return len(self.infra_failed)

    def check_counts(self) -> None:
        """Episodes stored + episodes counted as failed = episodes played, or the rollout fails loudly."""
        if self.completed + self.counted_failed != self.played:
            raise UncountedEpisodes(f"rollout {self.run_id}/{self.arm}: {self.played} episodes played but "
                                    f"{self.completed} stored + {self.counted_failed} counted as failed")


class UncountedEpisodes(RuntimeError):
    """An episode was played but neither stored nor counted as failed (a bug of the harness, never silent)."""


_GC_LOCK = threading.Lock()
_GC_USERS = 0
_GC_SAVED: tuple[int, int, int] | None = None
ROLLOUT_GC_THRESHOLD0 = 20_000


@contextlib.contextmanager
def rollout_gc() -> Iterator[None]:
    """Cheaper garbage collection while episodes run (process-wide, restored when the last rollout ends).

    An episode allocates many short-lived objects (litellm's per-call logging objects, pydantic
    records, workspace tables), so the default young-generation threshold (700) triggers collections
    that also walk every long-lived object: litellm's price map and the like. That was a fifth of the
    harness's CPU per step. Objects alive when the rollout starts are frozen (`gc.freeze`: they are
    skipped, not leaked; `gc.unfreeze` hands them back at the end) and young collections run 20_000
    allocations apart.
    """
    global _GC_USERS, _GC_SAVED
    with _GC_LOCK:
        if _GC_USERS == 0:
            _GC_SAVED = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(_GC_SAVED[0], ROLLOUT_GC_THRESHOLD0), *_GC_SAVED[1:])
        _GC_USERS += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_USERS -= 1
            if _GC_USERS == 0 and _GC_SAVED is not None:
                gc.set_threshold(*_GC_SAVED)
                gc.unfreeze()
                _GC_SAVED = None


def _is_done(done_keys: set, run_id: str, arm: str, task_id: str, trial: int) -> bool:
    return (run_id, arm, task_id, trial) in done_keys or (task_id, trial) in done_keys


async def run_rollouts(tasks: Iterable[Task], arm: Arm, trials: int, endpoint: ModelEndpoint,
                       settings: AgentSettings, run_id: str, done_keys: set | None = None,
                       on_episode: OnEpisode | None = None, *, env: TaskEnv | None = None,
                       progress: bool = True) -> RolloutSummary:
    """Run every task x trial not in `done_keys` ((run_id, arm, task_id, trial) or (task_id, trial)).

    The backend `settings.scale.backend` names (agent/backends/) plays them when it takes the round (worker
    processes with `settings.processes > 1`, Ray actors); everything here (accounting, `on_episode`, progress, logs)
    stays in this process either way.
    """
    if settings.steering_prompt and arm not in STEERABLE_ARMS:
        raise ValueError(f"steering prompt is teacher-only; refusing to apply it to arm '{arm}'")
    try:  # a key variable that is not set fails every episode alike: say so once, before any starts
        endpoint.completion_kwargs()
    except ValueError as err:
        raise FatalModelError(str(err), "missing_key", endpoint.model) from None
    done_keys = done_keys or set()
    tasks = list(tasks)
    todo = [(t, k) for t in tasks for k in range(trials) if not _is_done(done_keys, run_id, arm, t.id, k)]
    planned = len(tasks) * trials
    summary = RolloutSummary(run_id=run_id, arm=arm, model=endpoint.model, surface=settings.surface, planned=planned,
                             skipped=planned - len(todo), played=len(todo), completed=0)
    harness: Counter = Counter()
    stops: Counter = Counter()
    errors: Counter = Counter()
    rewards: list[float] = []
    bar = LoggedBar(len(todo), f"{arm} {endpoint.model}", "ep", log, disable=not progress)  # terminal and event log
    t0 = time.perf_counter()

    def account(ep: Episode) -> None:
        errors.update(ep.error_counts)
        summary.infra_errors += ep.infra_errors
        summary.agent_errors += ep.agent_errors
        summary.model_calls += len(ep.exchanges)
        summary.usage = summary.usage + ep.usage

    async def deliver(task: Task, trial: int, outcome: tuple[list[Episode], str | None]) -> None:
        """Account every attempt, then hand the final healthy episode to `on_episode`."""
        attempts, crashed = outcome
        summary.refills += max(0, len(attempts) + (crashed is not None) - 1)
        for ep in attempts:
            account(ep)
        if crashed is not None:  # its set-up failed before the agent acted: stored, with no verdict
            summary.crashed.append(f"{task.id}:{trial}: {crashed}")
            ep = not_started(run_id=run_id, arm=arm, task_id=task.id, trial=trial, model=endpoint.model,
                             surface=settings.surface, why=crashed)
            account(ep)
        else:
            ep = attempts[-1]
        if ep.stop_condition == "infra_error":
            summary.infra_failed.append(f"{task.id}:{trial}")
            log.warning("episode %s:%d still failing on infra after %d refills: %s", task.id, trial,
                        settings.max_refills, ep.error)
            bar.update(1)
            return
        if on_episode is not None:
            result = on_episode(ep)
            if inspect.isawaitable(result):
                await result
        summary.completed += 1
        stops[ep.stop_condition] += 1
        harness.update(k for k in HARNESS_FAILURES if ep.error_counts.get(k))
        if ep.verifier is not None:
            rewards.append(ep.reward)
            summary.passed += ep.passed
        bar.update(1)
        bar.set_postfix(passed=summary.passed, refills=summary.refills)
        log.info("episode run=%s arm=%s task=%s trial=%d stop=%s reward=%s steps=%d tokens=%d/%d "
                 "infra=%d agent=%d %.2fs", run_id, arm, task.id, trial, ep.stop_condition,
                 f"{ep.reward:.2f}" if ep.verifier else "-", len(ep.exchanges), ep.usage.prompt_tokens,
                 ep.usage.completion_tokens, ep.infra_errors, ep.agent_errors, ep.duration_s)

    backend = backend_for(settings.scale.backend.kind)
    elsewhere = backend.leaves_process(settings, len(todo))
    if elsewhere:
        refusal = shard_refusal(endpoint.model, env if env is not None else DEFAULT_ENV)
        if refusal is not None:
            log.warning("rollouts run=%s arm=%s: running in this process only: %s", run_id, arm, refusal)
            elsewhere = False
    try:
        with rollout_gc():
            if elsewhere:
                from .providers.faulty import FAULTY

                run: RoundRun = {"endpoint": endpoint, "settings": settings, "arm": arm, "run_id": run_id,
                                 "env": env if env is not None else DEFAULT_ENV}
                stats = await backend.play(todo, run, deliver)
                summary.backend = backend.name
                summary.processes, summary.worker_cpu_s, summary.resent = stats.processes, stats.cpu_s, stats.resent
                FAULTY.add_injected(stats.faults)
            else:
                with fail_fast_scope(min(FAIL_FAST_EPISODES, settings.concurrency, len(todo))):
                    await _run_here(todo, settings, deliver,
                                    lambda task, trial: attempt_episode(task, trial, endpoint, settings, arm, run_id,
                                                                        env), lanes=wants_lanes(endpoint.model))
    finally:
        bar.close()
    summary.stop_conditions = dict(stops)
    summary.error_counts = dict(errors)
    summary.harness_failures = dict(harness)
    summary.check_counts()
    summary.mean_reward = sum(rewards) / len(rewards) if rewards else None
    summary.duration_s = time.perf_counter() - t0
    log.info("rollouts run=%s arm=%s done=%d skipped=%d passed=%d refills=%d infra_failed=%d harness_failures=%s "
             "tokens=%d/%d cost=%s backend=%s processes=%d", run_id, arm, summary.completed, summary.skipped, summary.passed,
             summary.refills, summary.counted_failed, summary.harness_failures or {}, summary.usage.prompt_tokens,
             summary.usage.completion_tokens, summary.usage.cost_usd, summary.backend, summary.processes)
    return summary


async def _run_here(todo: list[tuple[Task, int]], settings: AgentSettings,
                    deliver: Callable[[Task, int, tuple[list[Episode], str | None]], Awaitable[None]],
                    attempt: Callable[[Task, int], Awaitable[tuple[list[Episode], str | None]]],
                    lanes: bool = False) -> None:
    """Every job on this event loop, at most `settings.concurrency` at a time: whichever waits next takes a free slot,
    or, with `lanes` (a model that batches in this process: lockstep.py), lane j plays jobs j, j+C, ... in turn."""
    if lanes:
        n = min(settings.concurrency, len(todo))
        playing = Lanes(n)

        async def play(task: Task, trial: int) -> None:
            await deliver(task, trial, await attempt(task, trial))

        async def lane(j: int) -> None:
            LANE.set((playing, j))  # this task's own context: the lane's model requests carry it
            started = []
            try:
                for task, trial in todo[j::n]:
                    released = asyncio.Event()
                    MODEL_DONE.set(released.set)  # copied into the episode's task as it is created
                    started.append(job := asyncio.ensure_future(play(task, trial)))
                    waiter = asyncio.ensure_future(released.wait())
                    await asyncio.wait({job, waiter}, return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                    if job.done() and job.exception() is not None:
                        break
            finally:
                playing.finish(j)
            await asyncio.gather(*started)  # the verifiers still running, and any error

        jobs = [asyncio.ensure_future(lane(j)) for j in range(n)]
    else:
        sem = asyncio.Semaphore(settings.concurrency)

        async def one(task: Task, trial: int) -> None:
            async with sem:
                await deliver(task, trial, await attempt(task, trial))

        jobs = [asyncio.ensure_future(one(t, k)) for t, k in todo]
    try:
        await asyncio.gather(*jobs)
    except BaseException:
        for j in jobs:
            j.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        raise


def run_rollouts_sync(*args: Any, **kwargs: Any) -> RolloutSummary:
    """`run_rollouts` from synchronous code (a Dagster asset); works inside a running event loop too."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_rollouts(*args, **kwargs))
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(run_rollouts(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    th = threading.Thread(target=target, name="env0-rollouts")
    th.start()
    th.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
