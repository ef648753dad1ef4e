"""The eight assets of a run. Each is a thin call into `env0_posttrain.stages`; data lives in the
DuckDB store, keyed by the partition's run id, so assets pass nothing through IO managers and
the graph's edges are plain `deps` (lineage without moving data through Dagster)."""


import dagster as dg

from env0_posttrain import rl_stages, stages
from env0_posttrain.defs.metadata import run_stage, to_result
from env0_posttrain.defs.partitions import run_partitions
from env0_posttrain.defs.pipes import run_training_via_pipes
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.parent_watch import die_with_parent

ROLLOUT_RETRY = dg.RetryPolicy(max_retries=2, delay=5, backoff=dg.Backoff.EXPONENTIAL)
# Concurrency pools (limits in dagster.yaml): the teacher's API quota, local/served student
# inference, the one GPU, and the short DuckDB writers. Inside a rollout asset the harness bounds
# concurrent requests per endpoint (teacher.concurrency / eval.concurrency).
POOL_TEACHER_API = "teacher_api"
POOL_STUDENT = "student_inference"
POOL_GPU = "gpu"
POOL_DUCKDB = "duckdb_writer"
DOWNSTREAM = dg.AutomationCondition.eager()


def _check(asset: str, name: str, description: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(name=name, asset=asset, description=description, blocking=True)


def _ctx(context: dg.AssetExecutionContext, env0: Env0Resource) -> stages.StageContext:
    die_with_parent()  # a step process must not outlive a killed run worker (parent_watch.py)
    return stages.StageContext.load(context.partition_key, env0.paths(), context.log)


@dg.asset(
    pool=POOL_DUCKDB,
    partitions_def=run_partitions,
    group_name="data",
    kinds={"duckdb"},
    code_version=stages.code_version("tasks", "workspace"),
    check_specs=[_check("task_set", "split_disjoint", "train/eval/heldout share no task id, content digest or (if asked) template")],
    description="Tasks drawn and split from the run spec, verified at generation (oracle passes, no-op fails).",
)
def task_set(context: dg.AssetExecutionContext, env0: Env0Resource):
    return to_result(stages.build_task_set(_ctx(context, env0)), "task_set")


@dg.asset(
    partitions_def=run_partitions,
    group_name="data",
    deps=[task_set],
    kinds={"duckdb"},
    retry_policy=ROLLOUT_RETRY,
    pool=POOL_TEACHER_API,
    automation_condition=DOWNSTREAM,
    code_version=stages.code_version("agent"),
    check_specs=[
        _check("teacher_trajectories", "no_unscored_rows", "every teacher episode was scored by its verifier"),
        _check("teacher_trajectories", "teacher_pass_rate_floor", "the teacher passes at least the spec's floor"),
    ],
    description="Teacher rollouts on the train split through the one agent harness (results.jsonl shaped).",
)
def teacher_trajectories(context: dg.AssetExecutionContext, env0: Env0Resource):
    return to_result(run_stage(stages.collect_teacher, _ctx(context, env0)), "teacher_trajectories")


@dg.asset(
    pool=POOL_DUCKDB,
    partitions_def=run_partitions,
    group_name="data",
    deps=[teacher_trajectories],
    kinds={"duckdb"},
    automation_condition=DOWNSTREAM,
    code_version=stages.code_version("sft"),
    check_specs=[
        _check("sft_rows", "rows_valid", "every training row passes validation"),
        _check("sft_rows", "expected_row_count", "conversion yielded the expected number of rows"),
        _check("sft_rows", "tito_drift", "TITO rows: the captured token ids equal the student's chat template "
                                         "re-rendering the same messages (sft.drift_check)"),
    ],
    description="Curated training rows: Prime-SFT JSONL, TRL rows and a parquet dataset.",
)
def sft_rows(context: dg.AssetExecutionContext, env0: Env0Resource):
    return to_result(stages.build_sft_rows(_ctx(context, env0)), "sft_rows")


@dg.asset(
    partitions_def=run_partitions,
    group_name="training",
    deps=[sft_rows],
    kinds={"pytorch"},
    pool=POOL_GPU,
    automation_condition=DOWNSTREAM,
    code_version=stages.code_version("train"),
    check_specs=[_check("lora_adapter", "adapter_learned", "the adapter's outputs differ from the base's and its training loss is lower")],
    description="LoRA adapter trained with TRL + PEFT on the SFT rows; metrics in DuckDB, curves as plots.",
)
def lora_adapter(context: dg.AssetExecutionContext, env0: Env0Resource, pipes_client: dg.ResourceParam[dg.PipesClient]):
    """Training runs in its own process through Dagster Pipes (subprocess locally, a GPU pod on Kubernetes)."""
    return run_training_via_pipes(context, pipes_client, context.partition_key, env0.paths().root)


def _eval_asset(name: str, arm: str, deps: list, description: str, pool: str):
    @dg.asset(
        name=name,
        partitions_def=run_partitions,
        group_name="evaluation",
        deps=deps,
        kinds={"duckdb"},
        retry_policy=ROLLOUT_RETRY,
        pool=pool,
        automation_condition=DOWNSTREAM,
        code_version=stages.code_version("agent"),
        check_specs=[_check(name, "no_unscored_rows", "every eval episode was scored by its verifier")],
        description=description,
    )
    def _asset(context: dg.AssetExecutionContext, env0: Env0Resource):
        return to_result(run_stage(stages.evaluate_arm, _ctx(context, env0), arm), name)

    return _asset


base_eval_trajectories = _eval_asset(
    "base_eval_trajectories", "base", [task_set], "The base student on the eval split, K trials, same harness.", POOL_STUDENT
)
sft_eval_trajectories = _eval_asset(
    "sft_eval_trajectories", "sft", [task_set, lora_adapter], "The base student + LoRA adapter on the eval split.", POOL_STUDENT
)
teacher_eval_trajectories = _eval_asset(
    "teacher_eval_trajectories", "teacher_eval", [task_set], "The teacher on the eval split: the reference ceiling.", POOL_TEACHER_API
)


@dg.asset(
    partitions_def=run_partitions,
    group_name="training",
    deps=[lora_adapter, task_set],
    kinds={"pytorch"},
    pool=POOL_GPU,
    automation_condition=DOWNSTREAM,
    code_version=stages.code_version("train", "agent"),
    check_specs=[_check("rl_adapter", "rl_adapter_trained", "GRPO ran and changed the SFT adapter (or the spec has no rl)")],
    description="GRPO after SFT (TRL GRPOTrainer) on the train tasks, episodes played by the eval harness; "
    "a recorded skip when the run spec has no rl section.",
)
def rl_adapter(context: dg.AssetExecutionContext, env0: Env0Resource):
    return to_result(rl_stages.train_rl_adapter(_ctx(context, env0)), "rl_adapter")


@dg.asset(
    name="rl_eval_trajectories",
    partitions_def=run_partitions,
    group_name="evaluation",
    deps=[task_set, rl_adapter],
    kinds={"duckdb"},
    retry_policy=ROLLOUT_RETRY,
    pool=POOL_STUDENT,
    automation_condition=DOWNSTREAM,
    code_version=stages.code_version("agent"),
    check_specs=[_check("rl_eval_trajectories", "no_unscored_rows", "every eval episode was scored by its verifier")],
    description="The base student + RL adapter on the eval split, same harness and trials; skipped without rl.",
)
def rl_eval_trajectories(context: dg.AssetExecutionContext, env0: Env0Resource):
    return to_result(run_stage(rl_stages.evaluate_rl, _ctx(context, env0)), "rl_eval_trajectories")


@dg.asset(
    pool=POOL_DUCKDB,
    partitions_def=run_partitions,
    group_name="evaluation",
    deps=[base_eval_trajectories, sft_eval_trajectories, teacher_eval_trajectories, lora_adapter, rl_eval_trajectories],
    kinds={"duckdb"},
    automation_condition=DOWNSTREAM,
    code_version=stages.code_version("evaluate"),
    description="Paired base-vs-adapter comparison: Markdown + HTML + plots, also as metadata.",
)
def comparison_report(context: dg.AssetExecutionContext, env0: Env0Resource):
    return to_result(stages.write_report(_ctx(context, env0)), "comparison_report")


@dg.asset(
    pool=POOL_DUCKDB,
    partitions_def=run_partitions,
    group_name="evaluation",
    deps=[comparison_report],
    kinds={"duckdb"},
    code_version=stages.code_version("evaluate"),
    description="Teacher-bounded table over this run and the runs a teacher backfill cloned from it: per teacher, "
    "teacher and student pass rates, the gap with its CI, the share of teacher passes the student keeps; a plot.",
)
def teacher_table(context: dg.AssetExecutionContext, env0: Env0Resource):
    from env0_posttrain.teacher_table_stage import build_teacher_table

    return to_result(build_teacher_table(_ctx(context, env0)), "teacher_table")


RUN_ASSETS = [
    task_set,
    teacher_trajectories,
    sft_rows,
    lora_adapter,
    base_eval_trajectories,
    sft_eval_trajectories,
    teacher_eval_trajectories,
    rl_adapter,
    rl_eval_trajectories,
    comparison_report,
    teacher_table,
]
EVAL_ASSETS = [base_eval_trajectories, sft_eval_trajectories, rl_eval_trajectories, comparison_report]
