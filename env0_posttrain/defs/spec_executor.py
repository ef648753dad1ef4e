"""The executor every run of the code location uses: Dagster's multiprocess executor, minus the optional stages the
run's spec lacks.

A run can be launched from places the project does not build the asset selection for: the UI's "Materialize all"
on the graph, the full_run job's Launchpad, a backfill launched from the UI. Each creates a run over every selected
asset; Dagster has no per-partition hook on that selection. The executor is where the run's plan is orchestrated,
before any step starts or claims a concurrency pool slot, so it reads the run's spec (spec/optional_stages.py) and
executes the plan without the absent stages' steps: they are logged as left out, marked Skipped, never
materialized, and hold no slot. What is below them (the report) runs as usual; it reads only the arms the run has.
A spec that cannot be read leaves the plan as it is: each step then fails with its own line naming how to make it.

The same place refuses, before any step starts, what only the partition's spec can judge and Dagster's config check
at Launch cannot (it runs before the partition is known): an eval suite the spec lacks, an arm in the recollect tag.
"""

from __future__ import annotations

from collections.abc import Iterator

import dagster as dg
from dagster._core.definitions.executor_definition import (MULTI_PROC_CONFIG, _core_multiprocess_executor_creation,
                                                           multiple_process_executor_requirements)
from dagster._core.events import DagsterEvent
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster._core.executor.base import Executor
from dagster._core.system_config.objects import ResolvedRunConfig

from env0_posttrain.defs.assets import RECOLLECT_TAG
from env0_posttrain.spec.optional_stages import absent_assets, section_of
from env0_posttrain.spec.runspec import RunSpec, SpecError, load_run_spec
from env0_posttrain.spec.suites import eval_suite_names
from env0_posttrain.stages.rounds import REUSED_UNLESS_ASKED
from env0_posttrain.util.paths import Paths

PARTITION_TAG = "dagster/partition"


def run_spec(run: dg.DagsterRun) -> RunSpec | None:
    """The spec of the run's one partition; None for a range or an unpartitioned job, or a spec that cannot be
    read (each step then fails with its own line naming how to make it)."""
    run_id = run.tags.get(PARTITION_TAG)
    if not run_id:
        return None
    config = ((run.run_config or {}).get("resources") or {}).get("env0") or {}
    data_dir = (config.get("config") or {}).get("data_dir") if isinstance(config, dict) else None
    try:
        return load_run_spec(Paths.from_env(data_dir or None), run_id)
    except SpecError:
        return None


def absent_steps(spec: RunSpec, step_keys: list[str]) -> tuple[list[str], str | None]:
    """(the steps of `step_keys` whose asset the spec lacks, one line saying so). Each asset is its own op, named
    as the asset (defs/assets.py), so its step key is the asset's name."""
    absent = absent_assets(spec)
    left_out = [k for k in step_keys if k in absent]
    if not left_out:
        return [], None
    sections = sorted({section_of(k) for k in left_out})
    return left_out, (f"{', '.join(left_out)} left out of this run: the spec of run {spec.run_id!r} has no "
                      f"{' or '.join(sections)} section, so they are not materialized and hold no pool slot")


def run_problems(run: dg.DagsterRun, spec: RunSpec, step_keys: list[str]) -> list[str]:
    """What the run asks that its spec cannot give, each naming where it was asked: an arm in the recollect tag
    that is never reused, an eval suite in an op's config the spec does not have. Dagster checks config against
    the job's schema at Launch, before it knows the partition; these need the partition's spec."""
    problems = []
    arms = [a.strip() for a in run.tags.get(RECOLLECT_TAG, "").split(",") if a.strip()]
    if unknown := [a for a in arms if a not in REUSED_UNLESS_ASKED]:
        problems.append(f"tag {RECOLLECT_TAG}: {unknown} cannot be collected again; the arms it takes: "
                        f"{list(REUSED_UNLESS_ASKED)} (every other arm plays a new round when materialized)")
    known = eval_suite_names(spec)
    for op, entry in sorted(((run.run_config or {}).get("ops") or {}).items()):
        suites = ((entry or {}).get("config") or {}).get("suites") or [] if isinstance(entry, dict) else []
        if op in step_keys and (unknown := [s for s in suites if s not in known]):
            problems.append(f"ops.{op}.config.suites: run {spec.run_id!r} has no eval suite named {unknown}; "
                            f"its suites: {known}")
    return problems


class RunRefused(Exception):
    """The run asks what its spec cannot give; no step was started."""


class SpecStagesExecutor(Executor):
    """Wraps an executor: the plan it gets lacks the steps of the optional stages the run's spec does not have."""

    def __init__(self, inner: Executor):
        self.inner = inner

    @property
    def retries(self):
        return self.inner.retries

    @property
    def step_dependency_config(self):
        return self.inner.step_dependency_config

    def execute(self, plan_context, execution_plan: ExecutionPlan) -> Iterator[DagsterEvent]:
        spec = run_spec(plan_context.dagster_run)
        if spec is not None:
            keys = list(execution_plan.step_keys_to_execute)
            if problems := run_problems(plan_context.dagster_run, spec, keys):
                line = f"run {spec.run_id!r} refused before any step started: " + "; ".join(problems)
                plan_context.log.error(line)
                raise RunRefused(line)
            left_out, line = absent_steps(spec, keys)
            if left_out:
                plan_context.log.info(line)
                for key in left_out:
                    yield DagsterEvent.step_skipped_event(plan_context.for_step(execution_plan.get_step_by_key(key)))
                job_def = plan_context.job.get_definition()
                execution_plan = execution_plan.build_subset_plan(
                    [k for k in keys if k not in left_out], job_def,
                    ResolvedRunConfig.build(job_def, plan_context.run_config))
        yield from self.inner.execute(plan_context, execution_plan)


@dg.executor(name="multiprocess", config_schema=MULTI_PROC_CONFIG,
             requirements=multiple_process_executor_requirements())
def spec_stages_executor(init_context) -> Executor:
    """Dagster's multiprocess executor (same config) that leaves out the optional stages a run's spec lacks."""
    return SpecStagesExecutor(_core_multiprocess_executor_creation(init_context.executor_config))
