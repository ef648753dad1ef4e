"""A task set as stored: the tasks, their splits and digests, provenance and the family ledger.

Its own module so that both ways of making one (the generator's registry and the env0 package importer) build it
without importing each other.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.spec.runspec import TaskSelection
from env0_posttrain.tasks.ledger import LedgerRow
from env0_posttrain.tasks.model import Split, Task


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    generator_version: str
    code_version: str
    seed: int
    company_seed: int


class TaskSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    selection: TaskSelection
    tasks: list[Task]
    splits: dict[str, Split] = Field(description="task id -> split")
    digests: dict[str, str] = Field(description="task id -> content digest at generation")
    provenance: Provenance
    ledger: list[LedgerRow] = Field(description="per family: drawn (scored, kept or not), used (in the splits), "
                                    "dropped and why, and the oracle / no-op check over the drawn")
    dropped: dict[str, str] = Field(default_factory=dict, description="task id -> why it was not kept")

    def split(self, name: Split) -> list[Task]:
        return [t for t in self.tasks if self.splits.get(t.id) == name]

    @property
    def train(self) -> list[Task]:
        return self.split("train")

    @property
    def eval(self) -> list[Task]:
        return self.split("eval")

    @property
    def heldout(self) -> list[Task]:
        return self.split("heldout")


def said(task: Task) -> str:
    """The instruction as the student reads it, case and spacing aside."""
    return " ".join(task.instruction.lower().split())
