"""Jobs: the whole run, the nightly eval slice, the teacher table's refresh, and the two jobs that make runs from the
Launchpad: `new_run` (what `run new` does) and `teacher_backfill` (what `backfill` does), through the same code
(`making/new_run.py`), so a spec written in the UI is checked exactly as one written on the command line.

`teacher_backfill` already runs inside the instance, so it adds the asset backfill to it directly, built as the
webserver's `launchPartitionBackfill` mutation builds it (`PartitionBackfill.from_asset_partitions`), instead of
calling back into a webserver whose address a run worker (a pod, say) need not know; the daemon runs it."""

import time
from typing import Literal

import dagster as dg
from dagster._core.definitions.assets.graph.asset_graph import AssetGraph
from dagster._core.execution.backfill import PartitionBackfill
from dagster._core.utils import make_new_backfill_id
from pydantic import Field

from env0_posttrain.making.new_run import (BackfillError, backfill_labels, build_spec, built_assets, load_source, make_run,
                                        plan_clones, write_clones)
from env0_posttrain.making.presets import PRESETS
from env0_posttrain.defs.checked_config import checked_schema
from env0_posttrain.defs.assets import EVAL_ASSETS, RUN_ASSETS, run_asset_keys, teacher_table
from env0_posttrain.defs.metadata import metadata_value
from env0_posttrain.defs.partitions import register_partition, run_partitions
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.runspec import SpecError
from env0_posttrain.util.paths import Paths

full_run_job = dg.define_asset_job("full_run", selection=RUN_ASSETS, partitions_def=run_partitions,
                                   description="Every asset of one run (pick the run_id partition).")
nightly_eval_job = dg.define_asset_job("nightly_eval", selection=EVAL_ASSETS, partitions_def=run_partitions,
                                       description="The eval arms and the report of one run (the nightly schedule's).")
teacher_table_job = dg.define_asset_job(
    "teacher_table_refresh", selection=[teacher_table], partitions_def=run_partitions,
    description="The teacher-bounded table of a source run, after a backfill clone's report landed "
    "(teacher_table_sensor).")

Preset = Literal[tuple(PRESETS)]  # type: ignore[valid-type]  # the Launchpad offers these as a choice


class NewRunConfig(dg.Config):
    """`env0-posttrain run new RUN_ID --preset P --teacher M --student S --set a.b=v ...` as Launchpad config."""

    run_id: str = Field(description="letters, digits, '.', '_' and '-': the spec file, the artifacts folder and the "
                        "partition key")
    preset: Preset = Field(default="demo", description="demo (offline, minutes: the default), demo-rl (the demo plus "
                           "GRPO), default (the seeds' recipe: a network teacher and a GPU), seeds / seeds-offline "
                           "(the seeds' corpus; set env0.root)")
    overrides: list[str] = Field(default_factory=list, description="section.field=value, each value read as YAML "
                                 "(e.g. lora.max_steps=200, tasks.families=[calendar])")
    teacher: str | None = Field(default=None, description="litellm model id of the teacher (default: the preset's)")
    student: str | None = Field(default=None, description="hub id or local path of the student (default: the preset's)")
    force: bool = Field(default=False, description="replace the spec of a run that already built assets")


class TeacherBackfillConfig(dg.Config):
    """`env0-posttrain backfill --from SOURCE --teacher M ...` as Launchpad config."""

    source_run: str = Field(description="the run whose spec is cloned once per teacher")
    teachers: list[str] = Field(description="litellm model ids of the new teachers")
    nightly: bool = Field(default=False, description="the clones join the nightly evals: the source's nightly suites, "
                          "or its eval split when it has none (refused when it has neither)")


def _warnings(lines: list[str]) -> dict:
    return {"warnings": dg.MetadataValue.md("\n".join(f"- {w}" for w in lines))} if lines else {}


def _refuse(err: Exception) -> dg.Failure:
    return dg.Failure(description=str(err), allow_retries=False)  # a bad spec is the same on every retry


def check_new_run(value: dict) -> None:
    """At Launch (defs/checked_config.py): the spec `run new` would write, checked as it checks it (run id, preset,
    teacher through litellm, every override against the RunSpec), and no replacing a built run's spec unforced."""
    config = NewRunConfig(**value)
    spec, _ = build_spec(config.run_id, config.preset, config.teacher, config.student, config.overrides)
    if not config.force and (built := built_assets(Paths.from_env(), spec)):
        raise SpecError(f"run {spec.run_id!r} already has a different spec and built {', '.join(built)}; pick a new "
                        "run id, or set force: true")


def check_teacher_backfill(value: dict) -> None:
    """At Launch: the source exists, every teacher resolves, the clones' run ids are free, `nightly` can act."""
    config = TeacherBackfillConfig(**value)
    paths = Paths.from_env()
    plan_clones(paths, load_source(paths, config.source_run), config.teachers, config.nightly)


@dg.op(description="Check the spec and write data/runs/RUN_ID.yaml, record it in the store, register the partition.",
       config_schema=checked_schema(NewRunConfig, check_new_run))
def write_run_spec(context: dg.OpExecutionContext, env0: Env0Resource) -> dg.Output:
    config = NewRunConfig(**context.op_config)
    paths = env0.paths()
    try:
        made = make_run(paths, config.run_id, preset=config.preset, teacher=config.teacher, student=config.student,
                        sets=config.overrides, force=config.force,
                        register=lambda run_id: register_partition(context.instance, run_id))
    except SpecError as err:
        raise _refuse(err) from None
    for line in made.warnings:
        context.log.warning(line)
    context.log.info(f"run {made.spec.run_id!r}: spec written to {made.path} and partition registered; materialize "
                     f"it with the full_run job (partition {made.spec.run_id}) or from the asset graph")
    return dg.Output(made.spec.run_id, metadata={
        "run_id": made.spec.run_id, "teacher": made.spec.teacher.model, "student": made.spec.student.model,
        "spec": metadata_value(made.path, paths.root),
        "spec_yaml": dg.MetadataValue.md(f"```yaml\n{made.spec.to_yaml()}```"), **_warnings(made.warnings),
    })


@dg.op(description="Clone the source run's spec per teacher, register the partitions, request one asset backfill.",
       config_schema=checked_schema(TeacherBackfillConfig, check_teacher_backfill))
def launch_teacher_backfill(context: dg.OpExecutionContext, env0: Env0Resource) -> dg.Output:
    config = TeacherBackfillConfig(**context.op_config)
    paths = env0.paths()
    try:
        source = load_source(paths, config.source_run)
        clones, warnings = plan_clones(paths, source, config.teachers, config.nightly)
    except (BackfillError, SpecError) as err:
        raise _refuse(err) from None
    write_clones(paths, clones)
    for c in clones:
        register_partition(context.instance, c.run_id)
    for line in warnings:
        context.log.warning(line)
    tags, title, description = backfill_labels(source, clones)
    backfill = PartitionBackfill.from_asset_partitions(  # every asset the clones have, as `env0-posttrain backfill`
        backfill_id=make_new_backfill_id(), asset_graph=AssetGraph.from_assets(RUN_ASSETS),
        partition_names=[c.run_id for c in clones], asset_selection=run_asset_keys(source),
        backfill_timestamp=time.time(), tags=tags, dynamic_partitions_store=context.instance,
        all_partitions=False, title=title, description=description, run_config=None)
    context.instance.add_backfill(backfill)  # as the UI's "Launch backfill" does; the daemon runs it
    context.log.info(f"backfill {backfill.backfill_id} requested over {[c.run_id for c in clones]}; the daemon runs "
                     "it (Runs > Backfills)")
    return dg.Output(backfill.backfill_id, metadata={
        "backfill": dg.MetadataValue.url(f"/runs/b/{backfill.backfill_id}"), "source_run": source.run_id,
        "runs": dg.MetadataValue.json({c.run_id: c.teacher.model for c in clones}), **_warnings(warnings),
    })


@dg.job(description="Make a run from the Launchpad: its spec from a preset, a teacher, a student and overrides, "
        "checked as `env0-posttrain run new` checks it, and its partition.")
def new_run():
    write_run_spec()


@dg.job(description="Backfill a run for new teachers from the Launchpad: one cloned spec per teacher and one asset "
        "backfill over them, as `env0-posttrain backfill` does.")
def teacher_backfill():
    launch_teacher_backfill()


class DeleteOrphansConfig(dg.Config):
    """Which partitions without a spec to delete (empty: every one that was never materialized)."""

    run_ids: list[str] = Field(default_factory=list, description="partition keys to delete; empty = every partition "
                               "that has no spec file and no materialization (what 'Add a partition' leaves behind)")


def orphan_partitions(instance: dg.DagsterInstance, paths: Paths) -> tuple[list[str], list[str]]:
    """(deletable, kept with a reason): partitions with no spec file, split by whether any asset materialized one."""
    keys = instance.get_dynamic_partitions(run_partitions.name)
    materialized: set[str] = set()
    for asset in RUN_ASSETS:
        materialized |= set(instance.get_materialized_partitions(asset.key))
    no_spec = [k for k in keys if not paths.spec(k).is_file()]
    return ([k for k in no_spec if k not in materialized],
            [f"{k}: has materializations (its data is in the store)" for k in no_spec if k in materialized])


@dg.op(description="Delete run partitions that have no spec file and no materialization.")
def delete_orphans(context: dg.OpExecutionContext, config: DeleteOrphansConfig, env0: Env0Resource) -> dg.Output:
    paths = env0.paths()
    deletable, kept = orphan_partitions(context.instance, paths)
    if config.run_ids:
        known = set(context.instance.get_dynamic_partitions(run_partitions.name))
        refused = [f"{k}: no such partition" for k in config.run_ids if k not in known]
        refused += [f"{k}: has a spec file ({paths.spec(k)})" for k in config.run_ids
                    if k in known and paths.spec(k).is_file()]
        refused += [w for w in kept if w.split(":")[0] in config.run_ids]
        if refused:
            raise _refuse(ValueError("not deleted: " + "; ".join(refused)))
        deletable = [k for k in deletable if k in config.run_ids]
    for key in deletable:
        context.instance.delete_dynamic_partition(run_partitions.name, key)
    context.log.info(f"deleted {len(deletable)} partition(s) without a spec: {deletable}"
                     + (f"; kept {kept}" if kept else ""))
    return dg.Output(deletable, metadata={"deleted": dg.MetadataValue.json(deletable),
                                          "kept": dg.MetadataValue.json(kept)})


@dg.job(description="Remove run partitions that have no spec and were never materialized (e.g. made by the "
        "Materialize dialog's 'Add a partition'); one with data or a spec is kept.")
def delete_orphan_partitions():
    delete_orphans()
