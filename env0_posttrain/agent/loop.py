"""The one episode loop: teacher, base and adapter all run through `run_episode`.

system (+ teacher-only steering) -> user instruction -> [model -> tool calls -> tool results]* ->
final answer or a stop -> verifier on the start state vs the end state.

Once the agent has begun, whatever fails of ours (the loop, the sandbox's close, the verifier, the record) still
ends in an Episode (harness_failures.py): an episode played is never dropped from its round.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

from env0_posttrain.tasks.model import Task
from env0_posttrain.tasks.task_paths import NO_PATHS

from . import _install_providers
from .endpoint import AgentSettings, ModelEndpoint
from .environment import DEFAULT_ENV, TaskEnv
from .harness_failures import FAILED_STOP, describe, recordable
from .llm import FatalModelError, is_env0_model, is_offline_model, register_free_model
from .providers.lockstep import MODEL_DONE
from .messages import (
    EMPTY_REPLY_NUDGE,
    STRAY_CALL_NUDGE,
    agent_error_payload,
    assistant_message,
    is_empty,
    parse_arguments,
    stray_tool_call,
    system_message,
    tool_message,
)
from .model_call import call_model
from .records import Arm, Episode, Exchange, TokenUsage
from .shell.tools import FINISH, SHELL_NOTE, TERMINAL, finish_message
from .stuck import StuckDetector

_install_providers()  # env0-oracle / env0-faulty must be routable before the first call

STEERABLE_ARMS: frozenset[str] = frozenset({"teacher", "teacher_eval"})


async def run_episode(task: Task, endpoint: ModelEndpoint, settings: AgentSettings, arm: Arm, trial: int,
                      run_id: str, *, env: TaskEnv | None = None, refill: int = 0) -> Episode:
    """Run one task x trial x arm to a stop condition and score it. Never raises for model or tool
    failures (they become the stop condition); raises FatalModelError for a misconfigured model.
    `refill` counts earlier runs of this episode that ended on infrastructure (env0 providers see it)."""
    env = env or DEFAULT_ENV
    surface = settings.surface
    if surface != "tools":  # one ShellEnv per episode: it holds the episode's sandbox
        from .shell.env import ShellEnv

        env = ShellEnv(env, surface, settings.shell, settings.tool_result_max_chars)
    steering = settings.steering_prompt
    if steering and arm not in STEERABLE_ARMS:
        raise ValueError(f"steering prompt is teacher-only; refusing to apply it to arm '{arm}'")
    started_at = time.time()
    t0 = time.perf_counter()
    tools = env.openai_tools(task.tools)
    offered = {t["function"]["name"] for t in tools}
    system = settings.system_prompt if surface == "tools" else f"{settings.system_prompt}\n\n{SHELL_NOTE}"
    messages: list[dict[str, Any]] = [system_message(system, steering),
                                      {"role": "user", "content": task.instruction}]
    # off the event loop: seeding an env0 package takes a while, and the other episodes' model calls go on meanwhile
    start_ws = await asyncio.to_thread(env.build, task)
    fork = getattr(env, "fork", None)
    ws = fork(start_ws) if fork is not None else env.build(task)  # the live copy; start_ws stays for the verifier

    kwargs = endpoint.completion_kwargs()
    if is_env0_model(endpoint.model):  # the offline providers answer for this task: it travels with the call
        if is_offline_model(endpoint.model):
            register_free_model(endpoint.model)
        kwargs["metadata"] = {"env0": {"task_id": task.id, "trial": trial, "run_id": run_id, "arm": arm,
                                       "refill": refill, "surface": surface, "task": task,
                                       "paths": getattr(env, "paths", NO_PATHS)}}

    exchanges: list[Exchange] = []
    counts: Counter = Counter()
    stop, error, final_answer = FAILED_STOP, None, None
    infra_errors = agent_errors = 0
    try:
        stop, error, final_answer, infra_errors, agent_errors = await _steps(
            env, ws, kwargs, messages, tools, offered, settings, exchanges, counts, f"{task.id}:{trial}")
    except FatalModelError:
        raise
    except Exception as exc:  # noqa: BLE001 - a bug of ours between the agent's steps: the episode is kept
        stop, error = FAILED_STOP, f"agent loop: {describe(exc)}"
        counts["loop_error"] += 1
    finally:
        close = getattr(env, "close", None)
        if close is not None:  # the sandbox ends before the verifier reads the end state
            try:
                counts.update(await asyncio.to_thread(close))
            except Exception as exc:  # noqa: BLE001 - the end state is the workspace's, not the sandbox's: still judged
                counts["sandbox_close_error"] += 1
                error = f"{error}; " if error else ""
                error += f"sandbox close: {describe(exc)}"
    if stop != "infra_error" and (model_done := MODEL_DONE.get()) is not None:
        model_done()  # a rollout in lanes starts the lane's next episode while this one is verified

    verifier = None
    if stop not in ("infra_error", FAILED_STOP):
        try:
            # off the event loop: an env0 package's test.sh runs for about a second, and the other
            # episodes of the rollout keep calling their models meanwhile
            verifier = await asyncio.to_thread(env.verify, task, start_ws, ws, final_answer)
        except Exception as exc:  # noqa: BLE001 - a verifier bug must not lose the trajectory
            stop, error = "verifier_error", describe(exc)
            counts["verifier_error"] += 1
    changes = _state_diff(env, start_ws, ws)

    usage = sum((e.usage for e in exchanges), TokenUsage())
    return recordable(dict(
        run_id=run_id, arm=arm, task_id=task.id, trial=trial, model=endpoint.model, messages=messages, tools=tools,
        surface=surface, steering_prompt=steering, final_answer=final_answer, stop_condition=stop, error=error, verifier=verifier,
        exchanges=exchanges, usage=usage, started_at=started_at, duration_s=time.perf_counter() - t0,
        infra_errors=infra_errors, agent_errors=agent_errors, error_counts=dict(counts), workspace_diff=changes,
    ))


async def _steps(env: TaskEnv, ws: Any, kwargs: dict[str, Any], messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]], offered: set[str], settings: AgentSettings, exchanges: list[Exchange],
                 counts: Counter, episode: str) -> tuple[str, str | None, str | None, int, int]:
    """Model -> tool calls -> results until a stop: (stop, error, final answer, infra errors, agent errors)."""
    infra_errors = agent_errors = consecutive_errors = 0
    final_answer: str | None = None
    stop: str | None = None
    error: str | None = None
    stuck = StuckDetector(settings.stuck_after)
    for step in range(settings.max_steps):
        outcome = await call_model(kwargs, messages, tools, settings, step, episode=episode)
        counts.update(outcome.error_counts)
        ex = outcome.exchange
        infra_errors += outcome.infra_failures
        exchanges.append(ex)
        if outcome.error_class == "infra":
            stop, error = "infra_error", ex.error
            break
        if outcome.error_class == "agent":  # the request itself was refused (context window, bad request)
            agent_errors += 1
            stop, error = "agent_error", ex.error
            break

        msg = assistant_message(outcome.response.choices[0].message, step)
        ex.response = msg
        messages.append(msg)
        stray = stray_tool_call(msg)
        if stray is not None:  # a format failure, not a final answer: the call was never run
            agent_errors += 1
            counts[stray] += 1
            consecutive_errors += 1
            messages.append({"role": "user", "content": STRAY_CALL_NUDGE})
        elif is_empty(msg):
            agent_errors += 1
            counts["empty_reply"] += 1
            consecutive_errors += 1
            messages.append({"role": "user", "content": EMPTY_REPLY_NUDGE})
        elif not msg.get("tool_calls"):
            final_answer = msg["content"]
            stop = "agent_completed"
            break
        else:
            failed = 0
            for call in msg["tool_calls"]:
                args, kind, problem = parse_arguments(call, offered)
                name = call["function"]["name"]
                if kind is None and name == FINISH:
                    answer = finish_message(args)
                    kind, problem = (None, "") if answer is not None else ("malformed_call", "finish needs a string `message`")
                    if answer is not None and final_answer is None:
                        final_answer = answer
                if kind is not None:
                    failed += 1
                    counts[kind] += 1
                    payload = agent_error_payload(kind, problem)
                elif name == FINISH:
                    payload = final_answer
                else:
                    payload = await asyncio.to_thread(env.call_tool, ws, name, args) if name == TERMINAL \
                        else env.call_tool(ws, name, args)
                messages.append(tool_message(call, payload, settings.tool_result_max_chars))
            agent_errors += failed
            consecutive_errors = consecutive_errors + 1 if failed == len(msg["tool_calls"]) else 0
            if final_answer is not None:  # OpenHands ends the conversation on `finish`
                stop = "agent_completed"
                break
            if (reason := stuck.observe(msg["tool_calls"])) is not None:
                stop, error = "stuck", reason
                break
        if consecutive_errors >= settings.max_consecutive_agent_errors:
            stop, error = "agent_error", f"{consecutive_errors} malformed replies in a row"
            break
    if stop is None:
        stop = "max_steps"
    return stop, error, final_answer, infra_errors, agent_errors


def _state_diff(env: TaskEnv, start: Any, end: Any) -> dict[str, Any] | None:
    state_diff = getattr(env, "state_diff", None)
    if state_diff is None:
        return None
    try:
        return state_diff(start, end)
    except Exception as exc:  # noqa: BLE001 - a record for readers must not cost the episode
        return {"error": f"{type(exc).__name__}: {exc}"}
