"""One rollout round of an arm: open or resume it, run only the missing episodes, close it; and what
every rollout asset reports about its round (metadata, the unscored-rows check, a data version)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from env0_posttrain.run.context import CheckOutcome, StageContext, content_hash


@contextmanager
def episode_writer(write: Callable[[Any], None]) -> Iterator[Callable[[Any], Any]]:
    """`on_episode` for the rollouts: each finished episode is written by one writer thread, in order, and the
    rollout awaits its write without blocking the event loop, so a store write waiting on the file lock (another
    process writing) does not stall the episodes still playing. Leaving waits for every queued write."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="episode-writer") as pool:
        yield lambda ep: asyncio.wrap_future(pool.submit(write, ep))


def rollout(ctx: StageContext, arm: str, tasks: list, trials: int, endpoint, settings) -> tuple[str, list, Any]:
    """Open (or resume) a round, run only the episodes it is missing, close it."""
    from env0_posttrain.agent import FatalModelError, run_rollouts_sync

    round_id = ctx.store.open_round(ctx.run_id, arm, endpoint.model, len(tasks) * trials)
    done = ctx.store.done_keys(round_id)
    ctx.log.info(f"{arm}: round {round_id}, {len(done)} of {len(tasks) * trials} episodes already stored")
    try:
        with episode_writer(lambda ep: ctx.store.write_episode(round_id, ep)) as on_episode:
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
        "round_id": round_id, "episodes": n, "strict_passes": passes, "pass_rate": round(passes / n, 4) if n else 0.0,
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
