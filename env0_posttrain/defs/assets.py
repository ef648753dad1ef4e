"""The assets of a run. Each is a thin call into a stage of `env0_posttrain.stages`; data lives in the DuckDB
store, keyed by the partition's run id, so assets pass nothing through IO managers and the graph's edges
are plain `deps` (lineage without moving data through Dagster).

`asset_settings` is where every asset gets what they all share: the run_id partitions, eager automation
downstream of the task set, a retry policy for the rollouts, a concurrency pool, the code version of the
packages that make it, and blocking checks.
"""

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import dagster as dg
from dagster._core.errors import DagsterPipesExecutionError
from pydantic import Field

from env0_posttrain.defs.console_logger import STEP_ERROR_TAG
from env0_posttrain.defs.metadata import run_stage, to_result
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.pipes import run_training_via_pipes
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.spec.optional_stages import applicable, optional_assets
from env0_posttrain.spec.runspec import SpecError, load_run_spec
from env0_posttrain.util.parent_watch import die_with_parent
from env0_posttrain.stages import base_model as base_model_stage, comparison_report as report_stage, eval_suites as suites_stage
from env0_posttrain.stages import eval_trajectories as evals, onpolicy_adapter as onpolicy, rl_adapter as rl
from env0_posttrain.stages import sft_rows as sft_stage
from env0_posttrain.stages import task_set as task_set_stage, teacher_table as teacher_table_stage
from env0_posttrain.stages import teacher_trajectories as teacher
from env0_posttrain.stages.context import StageContext, code_version
from env0_posttrain.stages.lora_adapter import set_aside_partial_adapters
from env0_posttrain.util.processes import signal_cause

ROLLOUT_RETRY = dg.RetryPolicy(max_retries=2, delay=5, backoff=dg.Backoff.EXPONENTIAL)
# Concurrency pools (limits in dagster.yaml): the teacher's API quota, local/served student
# inference, the one GPU (and the CPU-heavy base build), and the short DuckDB writers. Inside a
# rollout asset the harness bounds concurrent requests per endpoint (teacher.concurrency / eval.concurrency).
POOL_TEACHER_API = "teacher_api"
POOL_STUDENT = "student_inference"
POOL_GPU = "gpu"
POOL_DUCKDB = "duckdb_writer"
POOL_IMPORT = "task_import"  # drawing and importing tasks (minutes for env0 packages) keeps the store's writers free


RECOLLECT_TAG = "env0/recollect"  # comma-separated arms whose finished round is collected again on purpose


@contextmanager
def spec_failures() -> Iterator[None]:
    """A partition whose spec is missing or invalid (Dagster's "Add a partition" makes one without) fails its
    step in one line that says how to make the spec, instead of a stack trace; no retry would mend it."""
    try:
        yield
    except SpecError as err:
        raise dg.Failure(description=str(err), allow_retries=False) from None


def _ctx(context: dg.AssetExecutionContext, env0: Env0Resource) -> StageContext:
    die_with_parent()  # a step process must not outlive a killed run worker (util/parent_watch.py)
    tags = context.run.tags
    recollect = frozenset(a.strip() for a in tags.get(RECOLLECT_TAG, "").split(",") if a.strip())
    with spec_failures():  # the spec is parsed once, by the stage's context
        return StageContext.load(context.partition_key, env0.paths(), context.log, reuse_since=_retry_since(context),
                                 recollect=recollect)


def _retry_since(context: dg.AssetExecutionContext) -> float | None:
    """A retry or re-execution (the daemon's after a killed run worker) is the same materialization as its root
    run: what another run finished after the root started is reused, not played again."""
    root = context.run.tags.get("dagster/root_run_id")
    record = context.instance.get_run_record_by_id(root) if root else None
    return record.create_timestamp.timestamp() if record else None


def asset_settings(name: str, *, group: str, deps: Sequence, pool: str, packages: Sequence[str], description: str,
                   checks: Sequence[tuple[str, str]] = (), kind: str = "duckdb", rollout: bool = False,
                   eager: bool = True, automation: dg.AutomationCondition | None = None) -> dict:
    """What every asset of a run shares, as `dg.multi_asset` keyword arguments for one asset and its checks.

    One asset as a subsettable multi_asset, so a check that does not apply to a run (TITO drift on chat rows)
    yields no result: Dagster shows it Skipped once the run succeeds, never a green pass that verified nothing."""
    condition = automation or (dg.AutomationCondition.eager() if eager else None)
    return dict(
        name=name,
        specs=[dg.AssetSpec(name, deps=list(deps), group_name=group, kinds={kind}, description=description,
                            code_version=code_version(*packages), automation_condition=condition)],
        partitions_def=run_partitions,
        pool=pool,
        retry_policy=ROLLOUT_RETRY if rollout else None,
        check_specs=[dg.AssetCheckSpec(name=c, asset=name, description=d, blocking=True) for c, d in checks],
        can_subset=True,
    )


def run_asset(name: str, **settings) -> Callable:
    """Decorate `fn(ctx) -> StageResult` into a run_id-partitioned asset named `name` (settings: `asset_settings`)."""

    def wrap(fn: Callable) -> dg.AssetsDefinition:
        @dg.multi_asset(**asset_settings(name, **settings))
        def _asset(context: dg.AssetExecutionContext, env0: Env0Resource):
            with plain_errors(context, name):
                result = to_result(run_stage(fn, _ctx(context, env0)), name, env0.paths().root)
            yield result

        return _asset

    return wrap


UNSCORED = ("no_unscored_rows", "every episode was scored by its verifier")


@run_asset("task_set", group="data", deps=[], pool=POOL_IMPORT, packages=("tasks", "workspace"), eager=False,
           checks=[("split_disjoint", "train/eval/heldout share no task id, content digest or (if asked) template")],
           description="Tasks drawn and split from the run spec, verified at generation (oracle passes, no-op fails).")
def task_set(ctx: StageContext):
    return task_set_stage.build_task_set(ctx)


@run_asset("base_model", group="training", deps=[task_set], pool=POOL_GPU, packages=("train",), kind="pytorch",
           description="The student's base weights: the tiny student built offline from its recipe and corpus "
           "(shared by runs that share them), or a hub id / path / served model recorded with its revision.")
def base_model(ctx: StageContext):
    return base_model_stage.build_base_model(ctx)


@run_asset("teacher_trajectories", group="data", deps=[task_set, base_model], pool=POOL_TEACHER_API,
           packages=("agent",), rollout=True,
           checks=[UNSCORED, ("teacher_pass_rate_floor", "the teacher passes at least the spec's floor")],
           description="Teacher rollouts on the train split through the one agent harness (results.jsonl shaped).")
def teacher_trajectories(ctx: StageContext):
    return teacher.collect_teacher(ctx)


@run_asset("sft_rows", group="data", deps=[teacher_trajectories, base_model], pool=POOL_DUCKDB, packages=("sft",),
           checks=[("rows_valid", "every training row passes validation"),
                   ("expected_row_count", "conversion yielded the expected number of rows"),
                   ("tito_drift", "TITO rows: the captured token ids equal the student's chat template "
                                  "re-rendering the same messages (sft.drift_check)")],
           description="Curated training rows: Prime-SFT JSONL, TRL rows and a parquet dataset.")
def sft_rows(ctx: StageContext):
    return sft_stage.build_sft_rows(ctx)


@dg.multi_asset(**asset_settings(
    "lora_adapter", group="training", deps=[sft_rows, base_model], pool=POOL_GPU, packages=("train",), kind="pytorch",
    checks=[("adapter_learned", "the adapter's outputs differ from the base's and its training loss is lower")],
    description="LoRA adapter trained with TRL + PEFT on the SFT rows; metrics in DuckDB, curves as plots."))
def lora_adapter(context: dg.AssetExecutionContext, env0: Env0Resource, pipes_client: dg.ResourceParam[dg.PipesClient]):
    """Training runs in its own process through Dagster Pipes (subprocess locally, a GPU pod on Kubernetes)."""
    with plain_errors(context, "lora_adapter"):
        with spec_failures():  # checked here; the training process parses it for itself
            load_run_spec(env0.paths(), context.partition_key)
        with retry_when_killed(context, env0.paths()):
            result = run_training_via_pipes(context, pipes_client, context.partition_key, env0.paths().root)
    yield result


KILLED_RETRIES = 2  # a training killed by a signal (OOM, eviction) is tried again; a deterministic error is not
KILLED_BACKOFF_S = 10  # doubled on each retry


@contextmanager
def retry_when_killed(context: dg.AssetExecutionContext, paths) -> Iterator[None]:
    """The Pipes worker died by a signal: its partial adapter is moved aside, the cause said in plain words, and
    the step asks Dagster for a retry with exponential backoff (KILLED_BACKOFF_S, then twice it). Any other failure is not retried."""
    try:
        yield
    except DagsterPipesExecutionError as err:
        code = re.search(r"failed with code (-?\d+)", str(err))
        cause = signal_cause(int(code.group(1))) if code else None
        if cause is None:
            raise
        moved = set_aside_partial_adapters(paths, context.partition_key)
        aside = f"; its partial adapter moved aside to {', '.join(str(m) for m in moved)}" if moved else ""
        attempt = context.retry_number + 1
        if attempt > KILLED_RETRIES:
            raise dg.Failure(description=f"the training process was {cause}{aside}; gave up after {KILLED_RETRIES} "
                             "retries", allow_retries=False) from None
        wait_s = KILLED_BACKOFF_S * 2 ** context.retry_number
        context.log.error(f"lora_adapter: the training process was {cause}{aside}; retry {attempt} of "
                          f"{KILLED_RETRIES} in {wait_s} s")
        raise dg.RetryRequested(max_retries=KILLED_RETRIES, seconds_to_wait=wait_s) from None


@contextmanager
def plain_errors(context: dg.AssetExecutionContext, asset: str) -> Iterator[None]:
    """A failed step's own error comes first in the event log as one plain line; Dagster's failure (with its
    stack) follows it."""
    try:
        yield
    except dg.RetryRequested:
        raise
    except dg.Failure as err:
        context.log.error(f"{STEP_ERROR_TAG}{asset}: {(err.description or 'failed').splitlines()[0]}")
        raise
    except Exception as err:
        context.log.error(f"{STEP_ERROR_TAG}{asset}: {type(err).__name__}: {(str(err) or repr(err)).splitlines()[0]}")
        raise


@run_asset("eval_suites", group="data", deps=[task_set], pool=POOL_IMPORT, packages=("tasks", "workspace"),
           description="The spec's named eval suites (env0 package folders, the seen training tasks, the built-in "
           "generator), drawn and stored with each one's boundary ledger against the training set; nothing when the "
           "spec names none.")
def eval_suites(ctx: StageContext):
    return suites_stage.build_eval_suites(ctx)


class SuitesConfig(dg.Config):
    """Which eval suites a materialization plays; the others keep their newest rounds (the report reads them)."""

    suites: list[str] = Field(default_factory=list, description="suite names ('eval' = the tasks.n_eval split); "
                              "empty = every suite of the spec")


def _eval_asset(name: str, play: Callable, deps: list, description: str, pool: str,
                checks: Sequence[tuple[str, str]] = (UNSCORED,), eager: bool = True) -> dg.AssetsDefinition:
    """An eval arm's asset: `play(ctx, suites)`, keyed by run_id, one round per suite (see DESIGN-NOTES)."""

    @dg.multi_asset(**asset_settings(name, group="evaluation", deps=[*deps, eval_suites], pool=pool,
                                     packages=("agent",), rollout=True, checks=checks, description=description,
                                     eager=eager))
    def _asset(context: dg.AssetExecutionContext, config: SuitesConfig, env0: Env0Resource):
        with plain_errors(context, name):
            result = to_result(run_stage(play, _ctx(context, env0), list(config.suites) or None), name,
                               env0.paths().root)
        yield result

    return _asset


def _arm(arm: str) -> Callable:
    return lambda ctx, suites: evals.evaluate_arm(ctx, arm, suites)


base_eval_trajectories = _eval_asset("base_eval_trajectories", _arm("base"), [task_set, base_model],
                                     "The base student on every eval suite, K trials, same harness.", POOL_STUDENT)
sft_eval_trajectories = _eval_asset("sft_eval_trajectories", _arm("sft"), [task_set, lora_adapter],
                                    "The base student + LoRA adapter on every eval suite.", POOL_STUDENT)
teacher_eval_trajectories = _eval_asset("teacher_eval_trajectories", _arm("teacher_eval"), [task_set, base_model],
                                        "The teacher on every eval suite: the reference ceiling.", POOL_TEACHER_API)


@run_asset("rl_adapter", group="training", deps=[lora_adapter, task_set], pool=POOL_GPU, packages=("train", "agent"),
           kind="pytorch", checks=[("rl_adapter_trained", "GRPO ran and changed the SFT adapter")], eager=False,
           description="GRPO after SFT (TRL GRPOTrainer) on the train tasks, episodes played by the eval harness; "
           "only for runs whose spec has an rl section (spec/optional_stages.py).")
def rl_adapter(ctx: StageContext):
    return rl.train_rl_adapter(ctx)


rl_eval_trajectories = _eval_asset(
    "rl_eval_trajectories", rl.evaluate_rl, [task_set, rl_adapter],
    "The base student + RL adapter on every eval suite, same harness and trials; only for runs with rl.", POOL_STUDENT,
    eager=False)


# The report follows its arms, but does not wait for the arms of optional stages a run does not have.
REPORT_AUTOMATION = dg.AutomationCondition.eager().replace(
    "any_deps_missing", dg.AutomationCondition.any_deps_missing().ignore(dg.AssetSelection.assets(*optional_assets())))


@run_asset("onpolicy_adapter", group="training", deps=[lora_adapter, task_set], pool=POOL_GPU,
           packages=("train", "agent"), kind="pytorch",
           checks=[("onpolicy_adapter_trained", "on-policy rounds ran and changed the SFT adapter")], eager=False,
           description="On-policy distillation after SFT: rounds of the student playing the train tasks through the "
           "eval harness, the teacher's signal at the student's own states (relabel), training; only for runs whose "
           "spec has an onpolicy section (spec/optional_stages.py).")
def onpolicy_adapter(ctx: StageContext):
    return onpolicy.train_onpolicy_adapter(ctx)


onpolicy_eval_trajectories = _eval_asset(
    "onpolicy_eval_trajectories", onpolicy.evaluate_onpolicy, [task_set, onpolicy_adapter],
    "The base student + on-policy adapter on every eval suite, same harness and trials; only for runs with onpolicy.",
    POOL_STUDENT, eager=False)


@run_asset("comparison_report", group="evaluation", pool=POOL_DUCKDB, packages=("evaluate",),
           automation=REPORT_AUTOMATION,
           deps=[base_eval_trajectories, sft_eval_trajectories, teacher_eval_trajectories, lora_adapter,
                 rl_eval_trajectories, onpolicy_eval_trajectories],
           description="Paired base-vs-adapter comparison: Markdown + HTML + plots, also as metadata.")
def comparison_report(ctx: StageContext):
    return report_stage.write_report(ctx)


@run_asset("teacher_table", group="evaluation", deps=[comparison_report], pool=POOL_DUCKDB, packages=("evaluate",),
           eager=False,
           description="Teacher-bounded table over this run and the runs a teacher backfill cloned from it: per "
           "teacher, teacher and student pass rates, the gap with its CI, the share of teacher passes the student "
           "keeps; a plot.")
def teacher_table(ctx: StageContext):
    return teacher_table_stage.build_teacher_table(ctx)


RUN_ASSETS = [
    task_set,
    eval_suites,
    base_model,
    teacher_trajectories,
    sft_rows,
    lora_adapter,
    base_eval_trajectories,
    sft_eval_trajectories,
    teacher_eval_trajectories,
    rl_adapter,
    rl_eval_trajectories,
    onpolicy_adapter,
    onpolicy_eval_trajectories,
    comparison_report,
    teacher_table,
]
SUITE_EVAL_ASSETS = [base_eval_trajectories, sft_eval_trajectories, teacher_eval_trajectories, rl_eval_trajectories,
                     onpolicy_eval_trajectories]
EVAL_ASSETS = [base_eval_trajectories, sft_eval_trajectories, rl_eval_trajectories, onpolicy_eval_trajectories,
               comparison_report]


def run_asset_keys(spec, assets: Sequence[dg.AssetsDefinition] = RUN_ASSETS) -> list[dg.AssetKey]:
    """The keys of `assets` a run of `spec` has: without the optional stages its spec lacks."""
    return [dg.AssetKey(k) for k in applicable([a.key.to_user_string() for a in assets], spec)]
