"""On-policy distillation by relabelling (DAgger's data step): the teacher's next message at the student's states.

The student's episodes were played by the eval harness. At each of its assistant turns the teacher (any litellm
model; offline, the oracle answering from the state: providers/oracle.py `state_turn`) is asked, through the same
model-call path the harness uses, for its own next message given the conversation up to that turn. The row the
student trains on is that state's prompt (the token ids the student itself was sent) followed by the teacher's
message rendered with the student's chat template; only the teacher's tokens carry loss.

A teacher reply is hostile input like anything an episode produces: one that is not a usable message (no text and no
call, a call of a tool the episode did not offer, arguments that are not a JSON object, a failed request) is counted
as a teacher error and never becomes a row.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from env0_posttrain.agent.records import Episode
from env0_posttrain.sft.rows import to_trl_message
from env0_posttrain.sft.tokens import end_of_turn_id, render_ids


@dataclass
class Relabelled:
    """One assistant turn of a student episode and the teacher's message at the same state."""

    task_id: str
    trial: int
    turn: int
    request_len: int
    student: dict[str, Any]
    teacher: dict[str, Any] | None
    prompt_ids: list[int] | None  # what the student was sent, as the harness captured it
    error: str | None = None

    @property
    def agrees(self) -> bool:
        return self.teacher is not None and same_message(self.student, self.teacher)


@dataclass
class RelabelStats:
    turns: int = 0
    teacher_errors: int = 0
    agreements: int = 0
    rows: int = 0
    rows_swapped: int = 0  # renamed copies, beside `rows`
    entity_tokens: int = 0  # trained tokens weighted as entities (entity_weight)
    dropped_agreeing: int = 0
    rows_not_rendered: int = 0
    completion_tokens: int = 0
    errors: Counter = field(default_factory=Counter)

    @property
    def agreement(self) -> float | None:
        answered = self.turns - self.teacher_errors
        return self.agreements / answered if answered else None


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        raw = fn.get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except (ValueError, RecursionError):
            args = raw
        out.append((fn.get("name"), args))
    return out


def same_message(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Teacher agreement: the same calls (names and parsed arguments, in order), or the same final text."""
    ca, cb = _calls(a), _calls(b)
    if ca or cb:
        return ca == cb
    return (a.get("content") or "").strip() == (b.get("content") or "").strip()


def teacher_message_problem(message: dict[str, Any], offered: set[str]) -> str | None:
    """Why a teacher reply cannot be a training row, or None when it can."""
    calls = message.get("tool_calls") or []
    if not calls:
        return None if (message.get("content") or "").strip() else "empty_reply"
    for call in calls:
        fn = call.get("function") or {}
        if fn.get("name") not in offered:
            return "unknown_tool"
        raw = fn.get("arguments")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue  # no arguments: the harness runs it with {}
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except (ValueError, RecursionError):
            return "malformed_call"
        if not isinstance(args, dict):
            return "malformed_call"
    return None


async def relabel_episode(episode: Episode, task: Any, endpoint: Any, settings: Any, run_id: str,
                          gate: asyncio.Semaphore, env_paths: Any = None) -> list[Relabelled]:
    """The teacher's message at every assistant turn of `episode` (each asked on its own, concurrently)."""
    from env0_posttrain.agent.llm import is_env0_model, is_offline_model, register_free_model
    from env0_posttrain.agent.messages import assistant_message
    from env0_posttrain.agent.model_call import call_model
    from env0_posttrain.tasks.task_paths import NO_PATHS

    kwargs = endpoint.completion_kwargs()
    if is_env0_model(endpoint.model):  # the offline teacher answers for this task, at this state
        if is_offline_model(endpoint.model):
            register_free_model(endpoint.model)
        kwargs["metadata"] = {"env0": {"task_id": task.id, "trial": episode.trial, "run_id": run_id,
                                       "arm": "teacher", "refill": 0, "surface": episode.surface, "task": task,
                                       "paths": env_paths or NO_PATHS, "relabel": True}}
    offered = {t["function"]["name"] for t in episode.tools}
    turns = [(i, ex) for i, ex in enumerate(episode.exchanges) if ex.response is not None]

    async def one(turn: int, ex: Any) -> Relabelled:
        item = Relabelled(episode.task_id, episode.trial, turn, ex.request_len, ex.response, None,
                          ex.prompt_token_ids)
        async with gate:
            outcome = await call_model(kwargs, episode.messages[: ex.request_len], episode.tools, settings, turn,
                                       episode=f"relabel:{episode.task_id}:{episode.trial}")
        if outcome.error_class is not None or outcome.response is None:
            item.error = f"request: {outcome.exchange.error or outcome.error_class}"
            return item
        try:
            message = assistant_message(outcome.response.choices[0].message, turn)
        except Exception as err:  # noqa: BLE001 - a reply of any shape is counted, never raised
            item.error = f"unreadable reply: {type(err).__name__}"
            return item
        if (problem := teacher_message_problem(message, offered)) is not None:
            item.error = problem
            return item
        message.pop("reasoning_content", None)
        item.teacher = message
        return item

    return list(await asyncio.gather(*(one(i, ex) for i, ex in turns)))


def _turn_key(episode: Episode, item: Relabelled) -> str:
    return f"{episode.task_id}:{episode.trial}:{item.turn}"


def relabel_row(episode: Episode, item: Relabelled, tokenizer: Any) -> dict[str, Any] | None:
    """A token row: the state's prompt ids, then the teacher's message as the student's template renders it (the
    only trained tokens). None when the template does not render the teacher's turn after that prompt."""
    return _token_row(episode.messages[: item.request_len], item.teacher, episode.tools, tokenizer,
                      item.prompt_ids, _turn_key(episode, item))


def swapped_rows(episode: Episode, item: Relabelled, tokenizer: Any, swapper: Any, copies: int,
                 seed: int) -> list[dict[str, Any]]:
    """Up to `copies` rows of the same state and teacher message with the world's entities renamed
    (train/entity_swap.py), rendered with the student's template (the prompt ids were captured for the original only)."""
    out = []
    key = _turn_key(episode, item)
    for k in range(copies):
        renamed = swapper.swap([*episode.messages[: item.request_len], item.teacher],
                               random.Random(f"{seed}:{key}:{k}"))
        if renamed is None:
            continue
        row = _token_row(renamed[:-1], renamed[-1], episode.tools, tokenizer, None, f"{key}:swap{k}")
        if row is not None:
            out.append(row)
    return out


def weigh_entity_tokens(row: dict[str, Any], swapper: Any, tokenizer: Any, weight: float) -> int:
    """Gives `row` a per-token loss weight: `weight` on its trained tokens that spell an entity, 1 elsewhere.
    Returns how many tokens were weighted (0, and no weight list, when its tokens cannot be mapped to text)."""
    mask = row["completion_mask"]
    start = mask.index(1) if 1 in mask else len(mask)
    marked = swapper.token_mask(row["input_ids"][start:], tokenizer)
    if marked is None or not any(marked):
        return 0
    row["weight"] = [1.0] * start + [weight if m else 1.0 for m in marked]
    return sum(marked)


def _token_row(prefix_messages: Sequence[dict[str, Any]], teacher_message: dict[str, Any], tools: Any,
               tokenizer: Any, prompt_ids: Sequence[int] | None, key: str) -> dict[str, Any] | None:
    prefix = [to_trl_message(m) for m in prefix_messages]
    teacher = to_trl_message(teacher_message)
    prompt = render_ids(prefix, tools, tokenizer, add_generation_prompt=True)
    full = render_ids(prefix + [teacher], tools, tokenizer)
    if full[: len(prompt)] != prompt:
        return None
    output = full[len(prompt):]
    eot = end_of_turn_id(tokenizer)
    if eot is not None and eot in output:
        output = output[: output.index(eot) + 1]
    if not output:
        return None
    ids = list(prompt_ids) if prompt_ids else prompt
    return {"input_ids": ids + output, "completion_mask": [0] * len(ids) + [1] * len(output),
            "source": json.dumps({"episode_key": key})}


def relabel_rows(episodes: Sequence[Episode], tasks: dict[str, Any], endpoint: Any, settings: Any, run_id: str,
                 tokenizer: Any, concurrency: int, drop_agreeing: bool = False,
                 env_paths: Any = None, entity_swaps: int = 0, swap_seed: int = 0,
                 entity_weight: float = 1.0) -> tuple[list[dict[str, Any]], list[Relabelled], RelabelStats]:
    """Every turn of every episode relabelled; the rows, the turns (for the record) and the round's counts.

    `entity_swaps`: beside each row, up to that many copies with the entities of the task's company renamed.
    `entity_weight`: the loss weight of the teacher's tokens that spell such an entity (the others weigh 1)."""
    from env0_posttrain.train.entity_swap import swapper_for_company


    async def every() -> list[list[Relabelled]]:
        gate = asyncio.Semaphore(concurrency)
        return await asyncio.gather(*(relabel_episode(ep, tasks[ep.task_id], endpoint, settings, run_id, gate,
                                                      env_paths) for ep in episodes))

    stats, rows, items = RelabelStats(), [], []
    for ep, turns in zip(episodes, asyncio.run(every()), strict=True):
        swapper = swapper_for_company(tasks[ep.task_id].recipe.seed) if entity_swaps or entity_weight != 1 else None
        for item in turns:
            items.append(item)
            stats.turns += 1
            if item.teacher is None:
                stats.teacher_errors += 1
                stats.errors[(item.error or "unknown").split(":")[0]] += 1
                continue
            stats.agreements += item.agrees
            if drop_agreeing and item.agrees:
                stats.dropped_agreeing += 1
                continue
            row = relabel_row(ep, item, tokenizer)
            if row is None:
                stats.rows_not_rendered += 1
                continue
            copies = swapped_rows(ep, item, tokenizer, swapper, entity_swaps, swap_seed) if entity_swaps else []
            for r in (row, *copies):
                if entity_weight != 1:
                    stats.entity_tokens += weigh_entity_tokens(r, swapper, tokenizer, entity_weight)
                rows.append(r)
                stats.completion_tokens += sum(r["completion_mask"])
            stats.rows += 1
            stats.rows_swapped += len(copies)
    return rows, items, stats


def sft_token_rows(trl_rows: Sequence[dict[str, Any]], tokenizer: Any) -> list[dict[str, Any]]:
    """The SFT rows (whole teacher episodes) as one token row per assistant turn, so they train beside the
    relabelled rows; a row whose template is not prefix-stable is left out."""
    from env0_posttrain.sft.tito import retokenised_turns

    out = []
    for r in trl_rows:
        if isinstance(r.get("input_ids"), list):  # a TITO run's rows are token rows already
            out.append({k: r[k] for k in ("input_ids", "labels", "completion_mask") if k in r})
            continue
        if not isinstance(r.get("messages"), list):
            continue
        tools = json.loads(r["tools"]) if isinstance(r.get("tools"), str) else r.get("tools")
        try:
            turns = retokenised_turns(r["messages"], tools or [], tokenizer)
        except ValueError:
            continue
        for _, prompt, output in turns:
            out.append({"input_ids": prompt + output, "completion_mask": [0] * len(prompt) + [1] * len(output)})
    return out


def train_relabel_round(rows: Sequence[dict[str, Any]], lora: Any, base: str | Path, init_adapter: str | Path,
                        out_dir: Path, tokenizer: Any, on_log: Callable[[dict[str, Any]], None] | None = None,
                        base_ref: str | None = None, device: str | None = None):
    """The relabel kind's training step: SFT on the rows gathered so far (teacher tokens only), continuing the
    previous round's adapter (the SFT adapter before round 1). Returns lora_sft.TrainResult."""
    from env0_posttrain.train.lora_sft import train_lora

    clean = [{k: v for k, v in r.items() if k != "source"} for r in rows]
    return train_lora(clean, None, lora, base, out_dir, on_log=on_log, resume=False, tokenizer=tokenizer,
                      base_ref=base_ref, device=device, init_adapter=init_adapter)
