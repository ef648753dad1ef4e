"""Named eval suites and the env0 checkout a run reads: the run-spec sections that say *what* an arm is judged on.

A suite is one eval set beside the run's own random eval split (`tasks.n_eval`): a folder of env0 packages, the
training tasks themselves (`seen`), or the built-in generator, optionally sampled (seeded) and with exclusions, each
with its own trials. The seeds judged one adapter three ways (seen300, unseen100, standard60); a spec says the same.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from env0_posttrain.spec.section import Section
from env0_posttrain.util.clock import Clock

SUITE_NAME_PATTERN = r"^[A-Za-z0-9_-]+$"
DEFAULT_SUITE = "eval"  # the tasks.n_eval split: its rounds keep the plain arm names (round_arm)


class Env0Spec(Section):
    """The env0 checkout a run reads (recorded in the report's lineage; the stages pass it down as TaskPaths)."""

    root: Path | None = Field(
        default=None, description="an env0 checkout: its packages/ back the services that needles and verifiers "
        "import; a relative tasks.source or suite source resolves against it. None = ENV0_ROOT if set")
    clock: str = Field(
        default="host", description="the workspace clock an imported package's episodes are frozen at: host = the "
        "host's clock when the package is first imported (kept in the import cache); frozen@INSTANT (ISO 8601, e.g. "
        "frozen@2026-03-11T16:00:00Z) pins it, so imports made on other days give the same tasks. Episodes are always "
        "frozen (a running clock is for `workspace serve --clock`)")

    @field_validator("clock")
    @classmethod
    def _frozen_or_host(cls, v: str) -> str:
        clock = Clock.parse(v)  # ValueError: pydantic names the field
        if clock.mode == "running" or (clock.mode == "frozen" and clock.at is None):
            raise ValueError(f"{v!r}: episodes keep a frozen clock: say host or frozen@INSTANT "
                             "(a running clock is for `workspace serve --clock`)")
        return v

    def pinned_now(self) -> datetime | None:
        """The instant imports are frozen at (None: the host's clock at import)."""
        return Clock.parse(self.clock).at


class SuiteSpec(Section):
    """One named eval set; every eval arm plays it, and the report gives it its own table and boundary ledger."""

    name: str = Field(pattern=SUITE_NAME_PATTERN, min_length=1, max_length=64)
    kind: Literal["packages", "seen", "generated"] = Field(
        description="packages: a folder of env0 packages (source); seen: the run's training tasks; generated: the "
        "built-in generator (families, seeded by seed)")
    source: Path | None = Field(default=None, description="packages only: the folder (relative: against env0.root)")
    sample: int | None = Field(default=None, ge=1, le=1_000_000, description="draw this many, seeded by seed; None = all "
                               "(generated: required)")
    seed: int = Field(default=0, ge=0, le=2**32 - 1, description="the sample's order (and the generator's seed)")
    families: list[str] | None = Field(default=None, description="only tasks of these families; None = any "
                                       "(generated: tasks.families)")
    exclude_train: bool = Field(default=False, description="drop every task whose id or package name is a training "
                                "task's (the seeds' unseen100: tasks-train minus the 300)")
    exclude: list[str] = Field(default_factory=list, description="task ids or package names to leave out")
    trials: int | None = Field(default=None, ge=1, le=1_000, description="None = eval.trials")
    nightly: bool = Field(default=False, description="the nightly schedule re-evaluates this suite")


def check_suites(spec: Any, families: tuple[str, ...]) -> None:
    """Cross-field rules of a RunSpec; each message names the suite and the field."""
    if spec.tasks.n_eval == 0 and not spec.suites:
        raise ValueError("tasks.n_eval is 0 and the spec names no suites: the eval arms would have nothing to play")
    seen: set[str] = set()
    for i, s in enumerate(spec.suites):
        where = f"suites[{i}] ({s.name})"
        if s.name == DEFAULT_SUITE:
            raise ValueError(f"{where}.name: '{DEFAULT_SUITE}' names the tasks.n_eval split; choose another name")
        if s.name in seen:
            raise ValueError(f"{where}.name: two suites are named {s.name!r}")
        seen.add(s.name)
        if s.kind == "packages" and s.source is None:
            raise ValueError(f"{where}.source: a packages suite needs a folder of env0 packages")
        if s.kind != "packages" and s.source is not None:
            raise ValueError(f"{where}.source: only a packages suite reads a folder (kind is {s.kind})")
        if s.kind == "generated" and s.sample is None:
            raise ValueError(f"{where}.sample: a generated suite needs a size")
        if s.kind == "seen" and (s.exclude_train or s.exclude):
            raise ValueError(f"{where}.exclude_train / exclude: a seen suite is the training tasks themselves")
        unknown = sorted(set(s.families or ()) - set(families))
        if unknown:
            raise ValueError(f"{where}.families: unknown {unknown}; known: {list(families)}")


def resolve(spec: Any, path: Path) -> Path:
    """A spec path: relative ones resolve against env0.root when the spec names one (else the working directory)."""
    path = Path(path).expanduser()
    return path if path.is_absolute() or spec.env0.root is None else Path(spec.env0.root).expanduser() / path


def eval_suite_names(spec: Any) -> list[str]:
    """Every suite the eval arms play, the tasks.n_eval split first (when there is one)."""
    return ([DEFAULT_SUITE] if spec.tasks.n_eval else []) + [s.name for s in spec.suites]


def round_arm(arm: str, suite: str) -> str:
    """The name a suite's rounds are stored under: the plain arm for the default split, `arm@suite` otherwise."""
    return arm if suite == DEFAULT_SUITE else f"{arm}@{suite}"


def split_round_arm(name: str) -> tuple[str, str]:
    """(arm, suite) of a stored round's arm name: the inverse of round_arm."""
    arm, _, suite = name.partition("@")
    return arm, suite or DEFAULT_SUITE


def missing_folders(spec: Any) -> list[str]:
    """Each package folder the spec names that is not a directory here, by field (checked at `run new`)."""
    named = [("tasks.source", spec.tasks.source)] + [(f"suites.{s.name}.source", s.source) for s in spec.suites]
    out = [f"{field}: {resolve(spec, p)} is not a directory" + ("" if spec.env0.root or Path(p).is_absolute() else
           " (a relative folder resolves against env0.root: --set env0.root=PATH to an env0 checkout)")
           for field, p in named if p is not None and not resolve(spec, p).is_dir()]
    if spec.env0.root is not None and not Path(spec.env0.root).expanduser().is_dir():
        out.insert(0, f"env0.root: {spec.env0.root} is not a directory")
    return out
