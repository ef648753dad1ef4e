"""Task contracts shared by generators, verifiers, the agent harness and the store.

A task is pure data (JSON-serialisable) so it can be stored in DuckDB, exported as an env0 task
directory and shipped to another process; its verifier is looked up by template id.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.tasks.families.names import Family
from env0_posttrain.tasks.reward import Reward
from env0_posttrain.util.digests import digest

Split = Literal["train", "eval", "heldout"]


class ToolCall(BaseModel):
    """One call of an agent tool (an OpenAI function tool of the workspace)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class StateRecipe(BaseModel):
    """How to build the task's initial workspace: the company seed plus the items the task refers to."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    items: dict[str, Any] = Field(default_factory=dict, description="template-specific items planted into the workspace")


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    family: Family
    template_id: str
    difficulty: int = Field(ge=1, description="number of tool calls in the oracle solution")
    instruction: str
    recipe: StateRecipe
    oracle: list[ToolCall]
    final_answer: str | None = Field(default=None, description="expected answer, for tasks that ask a question")
    tools: list[str] = Field(description="names of the workspace tools exposed to the agent for this task")
    oracle_reward: Reward | None = None
    noop_reward: Reward | None = None
    noop_pass: bool = False

    def content_digest(self) -> str:
        """Hash of what the task *is* (instruction, state, solution), not of its id: catches copies under new ids."""
        payload = {
            "instruction": " ".join(self.instruction.lower().split()),
            "recipe": self.recipe.model_dump(mode="json"),
            "oracle": [c.model_dump(mode="json") for c in self.oracle],
            "final_answer": self.final_answer,
        }
        return digest(payload, 16)


class VerifierResult(BaseModel):
    """Reward in [-1, 1] plus per-check metrics; a tripped safety gate forces -1. A reward that is not a finite
    number in range (NaN, inf, a string, a bool, 2.0) is refused (tasks/reward.py), never clamped."""

    model_config = ConfigDict(extra="forbid")

    reward: Reward
    checks: dict[str, float] = Field(default_factory=dict, description="check name -> score in [0, 1]")
    gates: dict[str, bool] = Field(default_factory=dict, description="safety gate name -> tripped")
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.reward >= 1.0
