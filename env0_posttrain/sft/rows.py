"""Training-row contracts: Prime-SFT rows, TRL rows and the source reference that ties each to its episode."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from env0_posttrain.tasks.reward import Reward


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceRef(_Strict):
    """Where a training row came from: enough to find the episode in the store and the line in results.jsonl."""

    run_id: str
    arm: str
    task_id: str
    trial: int = Field(ge=0)
    example_id: str
    episode_key: str
    results_file: str | None = None
    results_row: int | None = Field(default=None, ge=1, description="1-based line in results_file, or position in the input rows")
    window: int | None = Field(default=None, ge=0, description="index of the window when a long row was split")
    repeat: int = Field(default=0, ge=0, description="0 = the row itself; k > 0 = k-th first-turn upweighting copy")


class PrimeSFTRow(_Strict):
    """Prime-SFT JSONL row: OpenAI chat messages (arguments as JSON strings, as the teacher produced them)."""

    messages: list[dict[str, Any]] = Field(min_length=2)
    tool_defs: list[dict[str, Any]]
    reward: Reward | None
    task_id: str
    task_name: str
    model: str
    agent: str
    source: SourceRef


class TrlRow(_Strict):
    """TRL conversational row (`messages` + `tools`); tool-call arguments are dicts, as chat templates need."""

    messages: list[dict[str, Any]] = Field(min_length=2)
    tools: list[dict[str, Any]]
    source: SourceRef

    def to_jsonl_dict(self) -> dict[str, Any]:
        """The stored form: `tools` and `source` as JSON strings so `datasets` cannot merge their schemas.

        TRL 1.16 `json.loads` a string `tools` column; `messages` stays a list so the row is
        recognised as conversational (datasets 5 stores messages of mixed shapes as Json).
        """
        return {
            "messages": self.messages,
            "tools": json.dumps(self.tools, ensure_ascii=False),
            "source": self.source.model_dump_json(),
        }

    @classmethod
    def from_stored(cls, value: dict[str, Any]) -> "TrlRow":
        data = dict(value)
        for key in ("tools", "source"):
            if isinstance(data.get(key), str):
                try:
                    data[key] = json.loads(data[key])
                except json.JSONDecodeError as err:
                    raise StoredFieldError(key, f"is a string but not JSON: {err.msg}") from None
        return cls.model_validate(data)


class StoredFieldError(ValueError):
    """A JSON-string column of a stored TRL row that does not parse."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def to_trl_message(message: dict[str, Any]) -> dict[str, Any]:
    """OpenAI message -> the shape chat templates render: arguments dicts, no null-valued keys."""
    out = {k: v for k, v in message.items() if v is not None and k != "tool_calls"}
    if message.get("role") == "assistant":
        out.setdefault("content", "")
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = []
        for call in calls:
            fn = dict(call["function"])
            args = fn.get("arguments")
            fn["arguments"] = json.loads(args) if isinstance(args, str) else (args or {})
            out["tool_calls"].append({"id": call["id"], "type": "function", "function": fn})
    return out


class TitoRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_ids: list[int] = Field(min_length=1, description="the prompt exactly as the model saw it")
    output_ids: list[int] = Field(min_length=1, description="the assistant turn, up to its end-of-turn token")
    weight: float = Field(default=1.0, gt=0.0, description="per-turn loss weight (first-turn upweighting)")
    turn: int = Field(ge=0, description="0-based assistant turn in the episode")
    origin: Literal["native", "retokenised"]
    source: SourceRef

    @model_validator(mode="after")
    def _ids_non_negative(self) -> "TitoRow":
        if any(i < 0 for i in self.input_ids) or any(i < 0 for i in self.output_ids):
            raise ValueError("token ids must be non-negative")
        return self

    def ids_and_mask(self) -> dict[str, list[int]]:
        """The equivalent `ids + mask` form TRL and train.rows read (completion_mask 1 = trained)."""
        return {"input_ids": [*self.input_ids, *self.output_ids],
                "completion_mask": [0] * len(self.input_ids) + [1] * len(self.output_ids)}

    def labels(self) -> list[int]:
        return [-100] * len(self.input_ids) + list(self.output_ids)
