"""Per-family ledger of the task set: how many tasks were drawn (scored), used (in the set's splits) and dropped
(and why), and the generation-time check on the drawn ones: how often the oracle passes and doing nothing passes.

It goes into the report: an oracle pass rate under 1 means a broken template, a no-op pass rate
above 0 means tasks a do-nothing agent would be credited for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.tasks.model import Task
from env0_posttrain.util.markdown_table import md_table


class LedgerRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    family: str
    tasks: int = Field(description="drawn: scored by the generation-time check, kept or not")
    oracle_pass: int
    noop_pass: int
    mean_oracle_reward: float
    mean_noop_reward: float
    used: int | None = Field(default=None, description="in the set's splits (None: stored before it was counted)")
    dropped: int = Field(default=0, description="not kept, before or after scoring (TaskSet.dropped)")
    dropped_reasons: dict[str, int] = Field(default_factory=dict, description="reason -> how many")

    @property
    def oracle_pass_rate(self) -> float:
        return self.oracle_pass / self.tasks if self.tasks else 0.0

    @property
    def noop_pass_rate(self) -> float:
        return self.noop_pass / self.tasks if self.tasks else 0.0


def build_ledger(tasks: Iterable[Task], key: str = "family", *, used: Iterable[Task] | None = None,
                 dropped: Mapping[str, str] | None = None, families: Mapping[str, str] | None = None) -> list[LedgerRow]:
    """One row per family (or per ``template_id`` with ``key="template_id"``) of scored tasks (drawn).

    ``used``: the tasks in the set's splits; ``dropped``: task id or package -> why it was not kept (the set's
    ``dropped``); ``families``: the family of a dropped entry that was never scored (a failed import, a family not
    asked for); one that none names counts under "unknown"."""
    drawn = list(tasks)
    groups: dict[str, list[Task]] = defaultdict(list)
    for task in drawn:
        if task.oracle_reward is None or task.noop_reward is None:
            raise ValueError(f"task {task.id} was never scored (oracle_reward/noop_reward missing)")
        groups[getattr(task, key)].append(task)
    in_use: dict[str, int] = defaultdict(int)
    for task in used or ():
        in_use[getattr(task, key)] += 1
    of = {t.id: getattr(t, key) for t in drawn} | dict(families or {})
    reasons: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for name, why in (dropped or {}).items():
        reasons[of.get(name, "unknown")][reason_kind(why)] += 1
    rows = []
    for name in sorted(set(groups) | set(in_use) | set(reasons)):
        group = groups.get(name, [])
        n = len(group) or 1
        rows.append(
            LedgerRow(
                family=name,
                tasks=len(group),
                oracle_pass=sum(t.oracle_reward >= 1.0 for t in group),
                noop_pass=sum(t.noop_pass for t in group),
                mean_oracle_reward=sum(t.oracle_reward for t in group) / n,
                mean_noop_reward=sum(t.noop_reward for t in group) / n,
                used=in_use.get(name, 0) if used is not None else None,
                dropped=sum(reasons[name].values()) if name in reasons else 0,
                dropped_reasons=dict(sorted(reasons[name].items(), key=lambda kv: (-kv[1], kv[0])))
                if name in reasons else {},
            )
        )
    return rows


def reason_kind(why: str) -> str:
    """A drop reason without the path that names one package (`step: path: message` of an import error), its first
    line and at most 100 characters, so that like reasons count together."""
    parts = why.splitlines()[0].split(": ") if why else [""]
    if len(parts) >= 3 and "/" in parts[1]:
        parts = [parts[0], *parts[2:]]
    text = ": ".join(parts)
    return text if len(text) <= 100 else text[:99] + "…"


def dropped_text(reasons: Mapping[str, int]) -> str:
    return "; ".join(f"{n} {why}" for why, n in reasons.items()) or "—"


def ledger_markdown(rows: list[LedgerRow]) -> str:
    return md_table(["family", "drawn (scored)", "used", "dropped", "oracle pass", "no-op pass", "mean oracle reward",
                     "mean no-op reward", "why dropped"],
                    [[r.family, r.tasks, "?" if r.used is None else r.used, r.dropped,
                      f"{r.oracle_pass} ({r.oracle_pass_rate:.0%})", f"{r.noop_pass} ({r.noop_pass_rate:.0%})",
                      f"{r.mean_oracle_reward:.2f}", f"{r.mean_noop_reward:.2f}", dropped_text(r.dropped_reasons)]
                     for r in rows])
