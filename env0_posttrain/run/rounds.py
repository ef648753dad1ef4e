"""One rollout round of an arm: open or resume it, run only the missing episodes, close it; and what
every rollout asset reports about its round (metadata, the unscored-rows check, a data version)."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, InvalidStateError
from contextlib import contextmanager, suppress
from typing import Any

from env0_posttrain.run.context import CheckOutcome, StageContext, content_hash


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


def rollout(ctx: StageContext, arm: str, tasks: list, trials: int, endpoint, settings,
            round_arm: str | None = None) -> tuple[str, list, Any]:
    """Open (or resume) a round, run only the episodes it is missing, close it. `round_arm` is the name the round is
    stored under when it differs from the arm that plays (an eval suite's `arm@suite`)."""
    from env0_posttrain.agent import FatalModelError, run_rollouts_sync

    round_id = ctx.store.open_round(ctx.run_id, round_arm or arm, endpoint.model, len(tasks) * trials)
    done = ctx.store.done_keys(round_id)
    ctx.log.info(f"{arm}: round {round_id}, {len(done)} of {len(tasks) * trials} episodes already stored")
    try:
        with episode_writer(lambda eps: ctx.store.write_episodes(round_id, eps)) as on_episode:
            summary = run_rollouts_sync(
                tasks, arm=arm, trials=trials, endpoint=endpoint, settings=settings, run_id=ctx.run_id,
                done_keys=done, on_episode=on_episode,
            )
    except FatalModelError as err:  # one message in the spec's terms; the round stays open for a resume
        from env0_posttrain.run.rollout_errors import explain

        raise explain(ctx.spec, arm, err.kind, str(err), len(ctx.store.done_keys(round_id)),
                      len(tasks) * trials) from None
    episodes = ctx.store.load_episodes(round_id)
    summary_dict = summary.model_dump(mode="json")
    ctx.store.finish_round(round_id, summary_dict)
    return round_id, episodes, summary_dict


def rollout_metadata(round_id: str, episodes: list, summary: dict) -> dict[str, Any]:
    n = len(episodes)
    passes = sum(e.passed for e in episodes)
    return {
        "round_id": round_id, "surface": summary.get("surface", "tools"), "episodes": n, "strict_passes": passes, "pass_rate": round(passes / n, 4) if n else 0.0,
        "rows_with_tool_calls": sum(e.n_tool_calls > 0 for e in episodes),
        "unscored": sum(e.verifier is None for e in episodes),
        "stop_conditions": count(e.stop_condition for e in episodes), "summary": summary,
    }


def count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def unscored_check(episodes: list) -> CheckOutcome:
    bad = [f"{e.task_id}#{e.trial}: {e.stop_condition} {e.error or ''}".strip() for e in episodes if e.verifier is None]
    return CheckOutcome("no_unscored_rows", not bad, f"{len(bad)} unscored episodes" if bad else "every episode scored",
                        {"unscored": bad[:50]})


def episodes_version(episodes: list) -> str:
    return content_hash([(e.task_id, e.trial, e.reward, e.stop_condition, len(e.messages)) for e in episodes])
