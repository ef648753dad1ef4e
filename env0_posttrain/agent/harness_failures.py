"""What an episode the harness failed around is stored as: every episode played is stored, never dropped.

A round's verdict is over every episode it played, so a failure of ours (not the agent's) must not take an episode
out of it. Where it happens decides what is kept:

- before the agent could act (the task's workspace or sandbox could not be built): a stored episode with no
  messages, stop `environment_error`, no verdict (reward 0, a fail, listed as unscored with the reason);
- in the loop, between the agent's steps (a bug of a tool or of the loop): the messages so far, stop
  `environment_error`, no verdict;
- the sandbox's close: the agent's own stop and the verifier's verdict, with `sandbox_close_error` counted;
- the verifier: stop `verifier_error` (loop.py, as before), no verdict;
- recording or copying the episode out of a worker process: values JSON cannot hold become their text, counted as
  `recording_error`, the verdict kept; if even that fails, the episode's key with stop `environment_error`.

Each kind is one key of the episode's `error_counts` (HARNESS_FAILURES), so a round says how many ended each way.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from .records import Episode

FAILED_STOP = "environment_error"
HARNESS_FAILURES = ("setup_error", "loop_error", "sandbox_close_error", "verifier_error", "recording_error")


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


def not_started(*, run_id: str, arm: str, task_id: str, trial: int, model: str, surface: str, why: str) -> Episode:
    """An episode whose set-up failed before the agent acted (a crash of the environment)."""
    return Episode(run_id=run_id, arm=arm, task_id=task_id, trial=trial, model=model, messages=[], tools=[],
                   surface=surface, stop_condition=FAILED_STOP, error=f"set-up: {why}"[:2000],
                   error_counts={"setup_error": 1})


def recordable(fields: dict[str, Any]) -> Episode:
    """The Episode of `fields`; what does not validate or serialise is kept as its text (`recording_error`), and
    if even that fails, the episode's key with what went wrong."""
    try:
        ep = Episode(**fields)
        ep.model_dump_json()
        return ep
    except (ValidationError, ValueError, TypeError) as first:
        try:
            plain = json.loads(json.dumps(_as_dumpable(fields), default=str))
            counts = dict(plain.get("error_counts") or {})
            counts["recording_error"] = counts.get("recording_error", 0) + 1
            return Episode.model_validate({**plain, "error_counts": counts})
        except (ValidationError, ValueError, TypeError):
            keep = {k: fields[k] for k in ("run_id", "arm", "task_id", "trial", "model")}
            return Episode(**keep, messages=[], tools=[], surface=fields.get("surface", "tools"),
                           stop_condition=FAILED_STOP, error=f"recording: {describe(first)}",
                           error_counts={"recording_error": 1})


def _as_dumpable(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.model_dump(mode="json") if hasattr(v, "model_dump") else
                [x.model_dump(mode="json") if hasattr(x, "model_dump") else x for x in v] if isinstance(v, list) else v)
            for k, v in fields.items()}


def portable(ep: Episode) -> str:
    """The episode as JSON for the trip out of a worker process; one that cannot be serialised is made so first."""
    try:
        return ep.model_dump_json()
    except (ValueError, TypeError):
        return recordable(dict(ep)).model_dump_json()
