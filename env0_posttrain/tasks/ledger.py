"""Per-family ledger of the generation-time check: how often the oracle passes and doing nothing passes.

It goes into the report: an oracle pass rate under 1 means a broken template, a no-op pass rate
above 0 means tasks a do-nothing agent would be credited for.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from pydantic import BaseModel, ConfigDict

from env0_posttrain.tasks.model import Task
from env0_posttrain.markdown_table import md_table


class LedgerRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    family: str
    tasks: int
    oracle_pass: int
    noop_pass: int
    mean_oracle_reward: float
    mean_noop_reward: float

    @property
    def oracle_pass_rate(self) -> float:
        return self.oracle_pass / self.tasks if self.tasks else 0.0

    @property
    def noop_pass_rate(self) -> float:
        return self.noop_pass / self.tasks if self.tasks else 0.0


def build_ledger(tasks: Iterable[Task], key: str = "family") -> list[LedgerRow]:
    """One row per family (or per ``template_id`` with ``key="template_id"``) of scored tasks."""
    groups: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        if task.oracle_reward is None or task.noop_reward is None:
            raise ValueError(f"task {task.id} was never scored (oracle_reward/noop_reward missing)")
        groups[getattr(task, key)].append(task)
    rows = []
    for name in sorted(groups):
        group = groups[name]
        rows.append(
            LedgerRow(
                family=name,
                tasks=len(group),
                oracle_pass=sum(t.oracle_reward >= 1.0 for t in group),
                noop_pass=sum(t.noop_pass for t in group),
                mean_oracle_reward=sum(t.oracle_reward for t in group) / len(group),
                mean_noop_reward=sum(t.noop_reward for t in group) / len(group),
            )
        )
    return rows


def ledger_markdown(rows: list[LedgerRow]) -> str:
    return md_table(["family", "tasks", "oracle pass", "no-op pass", "mean oracle reward", "mean no-op reward"],
                    [[r.family, r.tasks, f"{r.oracle_pass} ({r.oracle_pass_rate:.0%})",
                      f"{r.noop_pass} ({r.noop_pass_rate:.0%})", f"{r.mean_oracle_reward:.2f}", f"{r.mean_noop_reward:.2f}"]
                     for r in rows])
