"""One task x trial with its refills: the unit of work a rollout runs, in this process or in a worker's."""

from __future__ import annotations

import logging

from env0_posttrain.tasks.model import Task

from .endpoint import AgentSettings, ModelEndpoint
from .environment import TaskEnv
from .llm import FatalModelError
from .loop import run_episode
from .records import Arm, Episode

log = logging.getLogger("env0_posttrain.agent")


async def attempt_episode(task: Task, trial: int, endpoint: ModelEndpoint, settings: AgentSettings, arm: Arm,
                          run_id: str, env: TaskEnv | None) -> tuple[list[Episode], str | None]:
    """One task x trial with its refills: (every attempt's episode, the last one final; a crash message).

    Stops at the first episode that did not end on infrastructure, after `max_refills` re-runs, or at a
    crash: run_episode raises only where the episode could not be set up before the agent acted (an environment
    bug: never retried; the rollout stores it as such, harness_failures.not_started). FatalModelError propagates.
    """
    attempts: list[Episode] = []
    for refill in range(settings.max_refills + 1):
        try:
            ep = await run_episode(task, endpoint, settings, arm, trial, run_id, env=env, refill=refill)
        except FatalModelError:
            raise
        except Exception as exc:  # noqa: BLE001 - one broken task must not stop the others
            log.exception("episode %s:%d crashed", task.id, trial)
            return attempts, f"{type(exc).__name__}: {exc}"
        attempts.append(ep)
        if ep.stop_condition != "infra_error":
            break
    return attempts, None

