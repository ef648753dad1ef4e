"""Episode -> one `results.jsonl` row shaped like benchflow/verifiers rows.

`prompt` is the conversation up to and including the first user message (what the task
gives), `completion` is everything the agent and the tools added. `trajectory` keeps every
model exchange with its token ids, so token-exact (TITO) rows and the drift check can be
built from the file alone, without the store. Each trajectory step also carries the
verifiers/benchflow step shape (`prompt`: the messages sent, `completion`: the one assistant
message returned), which benchflow's `export_trl_sft` turns into one row per step; the store
keeps only `request_len`, so the lists are rebuilt here (and for files written before them).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from env0_posttrain.agent.records import Episode, Exchange, StopCondition, TokenUsage
from env0_posttrain.sft.jsonl_io import write_jsonl_atomic
from env0_posttrain.sft.message_rules import check_conversation, find_banned_keys, tool_names_from_defs
from env0_posttrain.tasks.model import Task
from env0_posttrain.tasks.reward import Reward

# Stop conditions whose conversation is the agent's own doing and may be trained on.
TRAINABLE_STOPS = ("agent_completed", "max_steps")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ResultsInfo(_Strict):
    task_id: str = Field(min_length=1)
    task_name: str = Field(min_length=1, description="the task's template id: tasks of one template share a name")
    model: str = Field(min_length=1)
    agent: str = Field(min_length=1)
    training_ready: bool
    training_ready_reason: str = Field(min_length=1)
    run_id: str = Field(min_length=1)
    arm: str = Field(min_length=1)
    trial: int = Field(ge=0)
    family: str | None = None
    steering_prompt: str | None = Field(default=None, description="teacher-only text, kept so conversion can strip it")
    final_answer: str | None = Field(default=None, description="the agent's own final answer")
    surface: str = Field(default="tools", description="what the agent acted through: tools, shell (OpenHands' "
                         "terminal + finish) or both")


class Timing(_Strict):
    started_at: float = 0.0
    duration_s: float = Field(default=0.0, ge=0.0)
    model_latency_s: float = Field(default=0.0, ge=0.0)


class ResultsStep(Exchange):
    """One model exchange as a verifiers/benchflow trajectory step, plus our exchange fields."""

    prompt: list[dict[str, Any]] = Field(description="the messages sent: the row's messages[:request_len]")
    completion: list[dict[str, Any]] = Field(description="[the assistant message returned], [] when the call failed")


def step_of(exchange: Exchange, messages: list[dict[str, Any]]) -> ResultsStep:
    """The step shape of an exchange, its message lists cut from the episode's conversation."""
    fields = exchange.model_dump(exclude={"prompt", "completion"})
    completion = [exchange.response] if exchange.response is not None else []
    return ResultsStep(**fields, prompt=messages[: exchange.request_len], completion=completion)


class ResultsRow(_Strict):
    """One episode in results.jsonl (benchflow/verifiers field names)."""

    example_id: str = Field(min_length=1, description="the task id: trials of one task share it")
    prompt: list[dict[str, Any]] = Field(min_length=1)
    completion: list[dict[str, Any]]
    info: ResultsInfo
    reward: Reward | None = Field(description="the verifier's; None when the episode is unscored")
    score: float | None = Field(ge=0.0, le=1.0, description="partial credit: mean of the verifier's checks")
    error: str | None = None
    timing: Timing = Field(default_factory=Timing)
    is_completed: bool
    is_truncated: bool
    stop_condition: StopCondition
    metrics: dict[str, float] = Field(default_factory=dict)
    tool_defs: list[dict[str, Any]]
    token_usage: TokenUsage = Field(default_factory=TokenUsage)
    total_tool_calls: int = Field(ge=0)
    trajectory: list[ResultsStep] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _fill_step_messages(cls, data: Any) -> Any:
        """Rows written before steps carried `prompt`/`completion` get them from the conversation."""
        if not isinstance(data, dict) or not isinstance(data.get("trajectory"), list):
            return data
        if not all(isinstance(s, dict) and "prompt" not in s for s in data["trajectory"]):
            return data
        messages = [*(data.get("prompt") or []), *(data.get("completion") or [])]
        steps = []
        for step in data["trajectory"]:
            n, response = step.get("request_len"), step.get("response")
            cut = messages[:n] if isinstance(n, int) else []
            steps.append({**step, "prompt": cut, "completion": [response] if response is not None else []})
        return {**data, "trajectory": steps}

    @model_validator(mode="after")
    def _steps_match_conversation(self) -> "ResultsRow":
        messages = self.messages
        for i, step in enumerate(self.trajectory):
            if step.prompt != messages[: step.request_len]:
                raise ValueError(f"trajectory[{i}].prompt is not the row's messages[:{step.request_len}]")
            if step.completion != ([step.response] if step.response is not None else []):
                raise ValueError(f"trajectory[{i}].completion is not [trajectory[{i}].response]")
        return self

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [*self.prompt, *self.completion]

    @property
    def episode_key(self) -> str:
        return f"{self.info.run_id}/{self.info.arm}/{self.info.task_id}/{self.info.trial}"


def split_prompt(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """verifiers' split: the prompt ends with the first user message."""
    for i, msg in enumerate(messages):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return messages[: i + 1], messages[i + 1 :]
    return list(messages), []


def training_readiness(episode: Episode) -> tuple[bool, str]:
    """Whether the conversation may be trained on at all; the policy filters (reward...) come later."""
    if episode.stop_condition not in TRAINABLE_STOPS:
        return False, f"stop_condition={episode.stop_condition}" + (f": {episode.error}" if episode.error else "")
    names, tool_issues = tool_names_from_defs(episode.tools)
    located = [(f"messages[{i}]", m) for i, m in enumerate(episode.messages)]
    issues = tool_issues + check_conversation(located, None if tool_issues else names)
    issues += find_banned_keys(episode.messages, "messages")
    if issues:
        field, msg = issues[0]
        more = f" (+{len(issues) - 1} more)" if len(issues) > 1 else ""
        return False, f"invalid {field}: {msg}{more}"
    if episode.verifier is None:
        return False, "no verifier result"
    return True, "ok" if episode.stop_condition == "agent_completed" else "ok (truncated at max_steps)"


def _metrics(episode: Episode) -> dict[str, float]:
    metrics: dict[str, float] = {
        "n_tool_calls": float(episode.n_tool_calls),
        "n_assistant_turns": float(sum(1 for m in episode.messages if m.get("role") == "assistant")),
        "n_exchanges": float(len(episode.exchanges)),
        "infra_errors": float(episode.infra_errors),
        "agent_errors": float(episode.agent_errors),
    }
    if episode.verifier is not None:
        metrics.update({f"check/{k}": float(v) for k, v in episode.verifier.checks.items()})
        metrics["gates_tripped"] = float(sum(episode.verifier.gates.values()))
    return metrics


def results_row(episode: Episode, task: Task) -> ResultsRow:
    """The results.jsonl row of one episode; the task supplies names, never its oracle or state."""
    if episode.task_id != task.id:
        raise ValueError(f"episode {episode.key} is for task {episode.task_id!r}, not {task.id!r}")
    prompt, completion = split_prompt(episode.messages)
    ready, reason = training_readiness(episode)
    verifier = episode.verifier
    score = None
    if verifier is not None:
        score = sum(verifier.checks.values()) / len(verifier.checks) if verifier.checks else float(verifier.passed)
        score = min(1.0, max(0.0, score))
    return ResultsRow(
        example_id=task.id,
        prompt=prompt,
        completion=completion,
        info=ResultsInfo(
            task_id=task.id,
            task_name=task.template_id,
            model=episode.model,
            agent=episode.agent,
            training_ready=ready,
            training_ready_reason=reason,
            surface=episode.surface,
            run_id=episode.run_id,
            arm=episode.arm,
            trial=episode.trial,
            family=task.family,
            steering_prompt=episode.steering_prompt,
            final_answer=episode.final_answer,
        ),
        reward=verifier.reward if verifier is not None else None,
        score=score,
        error=episode.error,
        timing=Timing(
            started_at=episode.started_at,
            duration_s=max(0.0, episode.duration_s),
            model_latency_s=sum(max(0.0, x.latency_s) for x in episode.exchanges),
        ),
        is_completed=episode.stop_condition == "agent_completed",
        is_truncated=episode.stop_condition == "max_steps",
        stop_condition=episode.stop_condition,
        metrics=_metrics(episode),
        tool_defs=episode.tools,
        token_usage=episode.usage,
        total_tool_calls=episode.n_tool_calls,
        trajectory=[step_of(ex, episode.messages) for ex in episode.exchanges],
    )


def write_results_jsonl(rows: Iterable[ResultsRow | dict[str, Any]], path: str | Path) -> int:
    """Write rows atomically (tmp + rename); dicts are validated first so nothing malformed is stored."""
    checked: list[ResultsRow] = []
    for i, row in enumerate(rows):
        try:
            checked.append(row if isinstance(row, ResultsRow) else ResultsRow.model_validate(row))
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "(row)"
            raise ValueError(f"{path}: row {i + 1}: {field}: {first['msg']} (nothing written)") from None
    return write_jsonl_atomic(checked, path)
