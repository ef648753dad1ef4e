"""One rollout round of an arm: open or resume it, run only the missing episodes, close it; and what
every rollout asset reports about its round (metadata, the unscored-rows check, a data version).

A round finishes only when every planned episode is stored (`round_gap`): those the harness failed around are
stored as such (agent/harness_failures.py), so its verdict is over every episode it played."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, InvalidStateError
from contextlib import contextmanager, suppress
from typing import Any

from env0_posttrain.stages.context import CheckOutcome, StageContext, content_hash
from env0_posttrain.tasks.reward import is_unscored


@contextmanager
def episode_writer(write_many: Callable[[list], None]) -> Iterator[Callable[[Any], Any]]:
    """`on_episode` for the rollouts: finished episodes are written by one writer thread, in order, as many per
    transaction as have queued up while the last one was written (opening the store costs tens of ms, a row
    almost nothing), and each episode's coroutine awaits its own write without blocking the event loop, so a
    write waiting on the store's lock (another process writing) does not stall the episodes still playing.
    Leaving writes whatever is queued; a failed write fails the episodes of its batch."""
    pending: queue.SimpleQueue = queue.SimpleQueue()

    def drain() -> None:
        stopping = False
        while not stopping:
            batch = [pending.get()]
            while not pending.empty():
                batch.append(pending.get())
            stopping = batch[-1] is None
            batch = [item for item in batch if item is not None]
            if not batch:
                continue
            try:  # an episode whose rollout was cancelled meanwhile is written all the same: it finished
                write_many([ep for ep, _ in batch])
                outcome: BaseException | None = None
            except BaseException as err:  # handed to the episodes awaiting this batch
                outcome = err
            for _, done in batch:
                with suppress(InvalidStateError):  # cancelled: nobody awaits it any more
                    done.set_result(None) if outcome is None else done.set_exception(outcome)

    def on_episode(ep: Any) -> asyncio.Future:
        done: Future = Future()
        pending.put((ep, done))
        return asyncio.wrap_future(done)

    writer = threading.Thread(target=drain, name="episode-writer", daemon=True)
    writer.start()
    try:
        yield on_episode
    finally:
        pending.put(None)
        writer.join()


class RoundIncomplete(RuntimeError):
    """Episodes of the round still failed on infrastructure after their refills: the round stays open and the
    step fails (the rollout assets' RetryPolicy retries it), so the next attempt runs only the missing ones."""


# A finished round of these arms stands for a new one unless the run asks to collect it again: re-collecting
# teacher episodes costs the provider's money, re-running an eval arm is what a nightly eval is for.
REUSED_UNLESS_ASKED = ("teacher",)


def reusable_since(ctx: StageContext, arm: str) -> float | None:
    """Finished rounds from this time on stand for a new one; None: start a new round."""
    if arm in REUSED_UNLESS_ASKED and arm not in ctx.recollect:
        return 0.0
    return ctx.reuse_since


def rollout(ctx: StageContext, arm: str, tasks: list, trials: int, endpoint, settings,
            round_arm: str | None = None) -> tuple[str, list, Any]:
    """Reuse a finished round that stands for this one (`reusable_since`), else open (or resume) a round, run
    only the episodes it is missing and close it once every episode is stored. `round_arm` is the name the round
    is stored under when it differs from the arm that plays (an eval suite's `arm@suite`)."""
    from env0_posttrain.agent import FatalModelError, run_rollouts_sync

    planned = {(t.id, k) for t in tasks for k in range(trials)}
    since = reusable_since(ctx, arm)
    stored_as = round_arm or arm
    found = None if since is None else finished_round_covering(ctx.store, ctx.run_id, stored_as, endpoint.model,
                                                                planned, since)
    if found is not None:
        round_id, summary_dict = found
        gap = sorted(planned - ctx.store.done_keys(round_id))
        if not gap:
            ctx.log.info(f"{arm}: reused finished round {round_id}; no episode was run" + (
                " (`run materialize --recollect-teacher` collects a new round)" if arm in REUSED_UNLESS_ASKED else ""))
            return round_id, ctx.store.load_episodes(round_id), summary_dict | {"reused_round": True}
        ctx.log.info(f"{arm}: finished round {round_id} lacks {len(gap)} episodes (failed on infrastructure, or "
                     "never stored by an older version); reopened to fill them")
        ctx.store.reopen_round(round_id)  # resumed like a round that never finished
    round_id = ctx.store.open_round(ctx.run_id, stored_as, endpoint.model, len(planned))
    done = ctx.store.done_keys(round_id)
    ctx.log.info(f"{arm}: round {round_id}, {len(done)} of {len(planned)} episodes already stored")
    try:
        with episode_writer(lambda eps: ctx.store.write_episodes(round_id, eps)) as on_episode:
            summary = run_rollouts_sync(
                tasks, arm=arm, trials=trials, endpoint=endpoint, settings=settings, run_id=ctx.run_id,
                done_keys=done, on_episode=on_episode, env=ctx.task_env(),
            )
    except FatalModelError as err:  # one message in the spec's terms; the round stays open for a resume
        from env0_posttrain.stages.rollout_errors import explain

        raise explain(ctx.spec, arm, err.kind, str(err), len(ctx.store.done_keys(round_id)), len(planned)) from None
    gap = round_gap(planned, ctx.store.done_keys(round_id), summary)
    if gap:
        raise RoundIncomplete(
            f"{arm}: {len(gap)} of {len(planned)} episodes still failed on infrastructure after "
            f"{settings.max_refills} refills ({', '.join(gap[:5])}{' ...' if len(gap) > 5 else ''}); round {round_id} "
            "stays open: materializing again runs only these")
    episodes = ctx.store.load_episodes(round_id)
    summary_dict = summary.model_dump(mode="json")
    ctx.store.finish_round(round_id, summary_dict)
    return round_id, episodes, summary_dict


def finished_round_covering(store, run_id: str, arm: str, model: str, keys: set[tuple[str, int]],
                            finished_after: float = 0.0) -> tuple[str, dict] | None:
    """(round_id, summary) of the newest round of (run, arm, model) finished since `finished_after` that holds
    only episodes `keys` names (all but those it could not play): one that can stand for a new one."""
    return next(((r, summary) for r, summary in store.finished_rounds(run_id, arm, model, len(keys), finished_after)
                 if store.done_keys(r) <= keys), None)


def round_gap(planned: set[tuple[str, int]], stored: set[tuple[str, int]], summary) -> list[str]:
    """The round's planned episodes not stored yet: those this rollout counted as failed (infrastructure, after
    their refills), which a rerun plays. An episode neither stored nor counted is a bug of the harness: the round
    must not finish without it, so that raises."""
    missing = [f"{t}:{k}" for t, k in sorted(planned - stored)]
    from env0_posttrain.agent.rollouts import UncountedEpisodes

    uncounted = sorted(set(missing) - set(summary.infra_failed))
    if uncounted:
        raise UncountedEpisodes(f"{summary.arm}: {len(uncounted)} planned episodes are neither stored nor counted as "
                                f"failed ({', '.join(uncounted[:5])}); the round stays open")
    return missing


def rollout_metadata(round_id: str, episodes: list, summary: dict) -> dict[str, Any]:
    n = len(episodes)
    passes = sum(e.passed for e in episodes)
    return {
        "round_id": round_id, "surface": summary.get("surface", "tools"), "episodes": n, "strict_passes": passes, "pass_rate": round(passes / n, 4) if n else 0.0,
        "rows_with_tool_calls": sum(e.n_tool_calls > 0 for e in episodes),
        "unscored": sum(is_unscored(e) for e in episodes),
        "harness_failures": harness_failures(episodes),
        "stop_conditions": count(e.stop_condition for e in episodes), "summary": summary,
    }


def harness_failures(episodes: list) -> dict[str, int]:
    """Stored episodes the harness failed around, by where (set-up, loop, sandbox close, verifier, recording)."""
    from env0_posttrain.agent.harness_failures import HARNESS_FAILURES

    return count(k for e in episodes for k in HARNESS_FAILURES if e.error_counts.get(k))


def count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def unscored_check(episodes: list) -> CheckOutcome:
    bad = [f"{e.task_id}#{e.trial}: {e.stop_condition} {e.error or ''}".strip() for e in episodes
           if is_unscored(e)]
    if not episodes:  # nothing was played, so nothing was checked: no verdict rather than a pass
        return CheckOutcome("no_unscored_rows", None, "no episodes to check")
    return CheckOutcome("no_unscored_rows", not bad, f"{len(bad)} unscored episodes" if bad else "every episode scored",
                        {"unscored": bad[:50]})


def episodes_version(episodes: list) -> str:
    return content_hash([(e.task_id, e.trial, e.reward, e.stop_condition, len(e.messages)) for e in episodes])
