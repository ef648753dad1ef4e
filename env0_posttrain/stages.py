"""The stages of a run as plain Python: what each asset does, with no Dagster in sight.

Each stage reads its inputs from the store by run id, writes its outputs to the store and to
`data/artifacts/<run_id>/`, and returns a StageResult (metadata, a content-hash data version,
check outcomes) that `defs/` turns into a MaterializeResult. Keeping the stages here makes the
asset layer thin and lets tests run a stage without an instance.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from env0_posttrain.paths import Paths
from env0_posttrain.runspec import RunSpec, load_spec
from env0_posttrain.store import Store
from env0_posttrain.digests import canonical_json, file_digest, files_digest, sha256_hex
from env0_posttrain.markdown_table import records_table

PACKAGE_ROOT = Path(__file__).resolve().parent
ARMS_ON_EVAL = ("base", "sft", "teacher_eval", "rl")
MAX_OVERLENGTH_FRACTION = 0.1  # declared drops are counted; more than this many means the seq length is wrong


@dataclass
class CheckOutcome:
    name: str
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class StageResult:
    metadata: dict[str, Any]
    data_version: str
    checks: list[CheckOutcome] = field(default_factory=list)
    markdown: dict[str, str] = field(default_factory=dict)


@dataclass
class StageContext:
    run_id: str
    spec: RunSpec
    store: Store
    paths: Paths
    log: logging.Logger

    @classmethod
    def load(cls, run_id: str, paths: Paths, log: logging.Logger | None = None) -> "StageContext":
        spec = load_spec(paths.runs / f"{run_id}.yaml")
        store = Store(paths.db)
        store.upsert_run(spec)
        return cls(run_id, spec, store, paths, log or logging.getLogger("env0_posttrain"))

    def artifacts(self, *parts: str) -> Path:
        p = self.paths.artifacts(self.run_id).joinpath(*parts)
        p.mkdir(parents=True, exist_ok=True)
        return p


@cache
def code_version(*packages: str) -> str:
    """Hash of the packages' source: the UI marks an asset stale when the code that makes it changes."""
    return files_digest((f for pkg in packages for f in sorted((PACKAGE_ROOT / pkg).rglob("*.py"))), PACKAGE_ROOT)


def content_hash(*parts: Any) -> str:
    return sha256_hex(*map(canonical_json, parts), n=16)


def md_table(rows: list[dict[str, Any]]) -> str:
    return records_table(rows)


# task_set ----------------------------------------------------------------------------------
def build_task_set(ctx: StageContext) -> StageResult:
    from env0_posttrain.tasks import make_task_set, split_overlap, write_tasks_jsonl

    t0 = time.time()
    ts = make_task_set(ctx.spec.tasks, import_cache=ctx.paths.artifacts(ctx.run_id) / "tasks" / "env0-imports")
    ledger = [r.model_dump(mode="json") | {"oracle_pass_rate": r.oracle_pass_rate, "noop_pass_rate": r.noop_pass_rate}
              for r in ts.ledger]
    digest = content_hash(sorted(ts.digests.items()), ts.splits)
    ctx.store.replace_task_set(
        ctx.run_id, digest, ts.provenance.model_dump(mode="json"), ledger, [(ts.splits[t.id], t) for t in ts.tasks]
    )
    write_tasks_jsonl(ts, ctx.artifacts("tasks") / "tasks.jsonl")
    problems = split_overlap(ts)
    counts = {s: len(ts.split(s)) for s in ("train", "eval", "heldout")}
    families: dict[str, int] = {}
    for t in ts.tasks:
        families[t.family] = families.get(t.family, 0) + 1
    return StageResult(
        metadata={
            "n_tasks": len(ts.tasks), "splits": counts, "families": families, "task_set_digest": digest,
            "provenance": ts.provenance.model_dump(mode="json"), "dropped": len(ts.dropped),
            "seconds": round(time.time() - t0, 2),
        },
        markdown={"ledger": md_table(ledger)},
        data_version=digest,
        checks=[CheckOutcome("split_disjoint", not problems, "; ".join(problems[:5]) or "splits are disjoint",
                             {"problems": problems[:50]})],
    )


def load_tasks(ctx: StageContext, splits: tuple[str, ...]) -> list:
    from env0_posttrain.tasks.model import Task

    if ctx.spec.tasks.source is not None:  # env0 tasks name their package relative to the source folder
        from env0_posttrain.tasks.env0.verifier import use_source

        use_source(ctx.spec.tasks.source)
    tasks = []
    for split in splits:
        tasks += [Task.model_validate_json(j) for _, j in ctx.store.load_tasks(ctx.run_id, split)]
    if not tasks:
        raise RuntimeError(f"run {ctx.run_id}: no {'/'.join(splits)} tasks in the store; materialize task_set first")
    return tasks


# rollouts ----------------------------------------------------------------------------------
def _rollout(ctx: StageContext, arm: str, tasks: list, trials: int, endpoint, settings) -> tuple[str, list, Any]:
    """Open (or resume) a round, run only the episodes it is missing, close it."""
    from env0_posttrain.agent import FatalModelError, run_rollouts_sync

    round_id = ctx.store.open_round(ctx.run_id, arm, endpoint.model, len(tasks) * trials)
    done = ctx.store.done_keys(round_id)
    ctx.log.info(f"{arm}: round {round_id}, {len(done)} of {len(tasks) * trials} episodes already stored")
    try:
        summary = run_rollouts_sync(
            tasks, arm=arm, trials=trials, endpoint=endpoint, settings=settings, run_id=ctx.run_id,
            done_keys=done, on_episode=lambda ep: ctx.store.write_episode(round_id, ep),
        )
    except FatalModelError as err:  # one message in the spec's terms; the round stays open for a resume
        from env0_posttrain.rollout_errors import explain

        raise explain(ctx.spec, arm, err.kind, str(err), len(ctx.store.done_keys(round_id)),
                      len(tasks) * trials) from None
    episodes = ctx.store.load_episodes(round_id)
    summary_dict = summary.model_dump(mode="json")
    ctx.store.finish_round(round_id, summary_dict)
    return round_id, episodes, summary_dict


def _rollout_metadata(round_id: str, episodes: list, summary: dict) -> dict[str, Any]:
    n = len(episodes)
    passes = sum(e.passed for e in episodes)
    return {
        "round_id": round_id, "episodes": n, "strict_passes": passes, "pass_rate": round(passes / n, 4) if n else 0.0,
        "rows_with_tool_calls": sum(e.n_tool_calls > 0 for e in episodes),
        "unscored": sum(e.verifier is None for e in episodes),
        "stop_conditions": _count(e.stop_condition for e in episodes), "summary": summary,
    }


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def _unscored_check(episodes: list) -> CheckOutcome:
    bad = [f"{e.task_id}#{e.trial}: {e.stop_condition} {e.error or ''}".strip() for e in episodes if e.verifier is None]
    return CheckOutcome("no_unscored_rows", not bad, f"{len(bad)} unscored episodes" if bad else "every episode scored",
                        {"unscored": bad[:50]})


def _episodes_version(episodes: list) -> str:
    return content_hash([(e.task_id, e.trial, e.reward, e.stop_condition, len(e.messages)) for e in episodes])


def export_results(ctx: StageContext, episodes: list, tasks: dict) -> tuple[Path, list]:
    """The teacher round as results.jsonl (benchflow/verifiers rows): the file SFT conversion reads."""
    from env0_posttrain.sft import results_row, write_results_jsonl

    path = ctx.artifacts("teacher") / "results.jsonl"
    rows = [results_row(e, tasks[e.task_id]) for e in episodes]
    write_results_jsonl(rows, path)
    return path, rows


def collect_teacher(ctx: StageContext) -> StageResult:
    from env0_posttrain.models import ensure_base_student, rollout_settings, teacher_endpoint

    tasks = load_tasks(ctx, ("train",))
    spec = ctx.spec
    endpoint = teacher_endpoint(spec, tasks, lambda: ensure_base_student(spec, ctx.store, ctx.run_id, ctx.paths),
                                ctx.run_id)
    round_id, episodes, summary = _rollout(ctx, "teacher", tasks, spec.teacher.trials, endpoint,
                                           rollout_settings(spec, arm="teacher"))
    path, _ = export_results(ctx, episodes, {t.id: t for t in tasks})
    meta = _rollout_metadata(round_id, episodes, summary) | {"results_jsonl": path, "teacher": spec.teacher.model}
    floor = spec.teacher.min_pass_rate
    return StageResult(
        metadata=meta,
        data_version=_episodes_version(episodes),
        checks=[
            _unscored_check(episodes),
            CheckOutcome("teacher_pass_rate_floor", meta["pass_rate"] >= floor,
                         f"teacher pass rate {meta['pass_rate']:.1%} vs floor {floor:.1%}"),
        ],
    )


# sft rows ----------------------------------------------------------------------------------
def build_sft_rows(ctx: StageContext) -> StageResult:
    from env0_posttrain.models import load_student_tokenizer
    from env0_posttrain.sft import ConversionError, convert_both, export_parquet, validate_rows
    from env0_posttrain.sft.curation import expected_episodes
    from env0_posttrain.sft.jsonl_io import write_jsonl_atomic

    round_id = ctx.store.latest_round(ctx.run_id, "teacher")
    if round_id is None:
        raise RuntimeError(f"run {ctx.run_id}: no finished teacher round; materialize teacher_trajectories first")
    episodes = ctx.store.load_episodes(round_id)
    tasks = {t.id: t for t in load_tasks(ctx, ("train",))}
    out = ctx.artifacts("sft")
    results_path, results = export_results(ctx, episodes, tasks)
    expected = expected_episodes(results, ctx.spec.sft)
    tokenizer = load_student_tokenizer(ctx.spec, ctx.store, ctx.run_id, ctx.paths)
    if ctx.spec.sft.format == "tito":
        from env0_posttrain.stages_tito import build_tito_sft_rows

        return build_tito_sft_rows(ctx, round_id, len(episodes), results_path, results, expected, tokenizer)
    try:  # the expected count is checked below, where declared overlength drops can be told apart
        prime, trl, report = convert_both(results_path, ctx.spec.sft, tokenizer=tokenizer,
                                          max_seq_length=ctx.spec.lora.max_seq_length)
    except ConversionError as err:  # stored rows stay as they were; the blocking checks stop training
        return StageResult(
            metadata={"source_round": round_id, "error": str(err), "expected_episodes": expected},
            data_version=content_hash("failed", str(err)),
            checks=[CheckOutcome("rows_valid", False, str(err)), CheckOutcome("expected_row_count", False, str(err)),
                    _not_tito_check()],
        )
    trl_dicts = [r.to_jsonl_dict() for r in trl]
    write_jsonl_atomic(prime, out / "prime-sft.jsonl")
    write_jsonl_atomic(trl_dicts, out / "trl.jsonl")
    parquet = export_parquet(trl, out / "dataset")
    validation = validate_rows(trl_dicts, source=str(out / "trl.jsonl"))
    ctx.store.replace_sft_rows(ctx.run_id, [(p.task_id, p.reward, t) for p, t in zip(prime, trl_dicts)], round_id)
    skipped = dict(report.skipped)
    kept = report.curation.n_kept_episodes
    overlength = skipped.get("overlength", 0) + skipped.get("overlength_unwindowable", 0)
    count_ok = kept + overlength >= expected and overlength <= MAX_OVERLENGTH_FRACTION * max(expected, 1)
    count_note = (f"kept {kept} of {expected} expected episodes; {overlength} dropped as longer than "
                  f"max_seq_length {ctx.spec.lora.max_seq_length} (at most {MAX_OVERLENGTH_FRACTION:.0%} may be)")
    return StageResult(
        metadata={
            "source_round": round_id, "teacher_episodes": len(episodes), "kept_episodes": kept,
            "expected_episodes": expected, "rows": len(trl_dicts), "upweight_copies": report.curation.n_upweight_copies,
            "skipped": skipped, "results_jsonl": results_path, "prime_sft_jsonl": out / "prime-sft.jsonl",
            "trl_jsonl": out / "trl.jsonl", "parquet": Path(parquet),
            "rows_with_tool_calls": sum(any(m.get("tool_calls") for m in r.messages) for r in trl),
        },
        data_version=content_hash(trl_dicts),
        checks=[
            CheckOutcome("rows_valid", validation.ok, validation.summary(), validation.to_dict()),
            CheckOutcome("expected_row_count", count_ok, count_note, {"overlength": overlength}),
            _not_tito_check(),
        ],
        markdown={"skipped": md_table([{"reason": k, "rows": v} for k, v in skipped.items()])},
    )


def _not_tito_check() -> CheckOutcome:
    from env0_posttrain.stages_tito import not_tito_check

    return not_tito_check("chat rows (sft.format messages) carry no token ids")


# adapter -----------------------------------------------------------------------------------
def train_adapter(ctx: StageContext) -> StageResult:
    from env0_posttrain.models import ensure_base_student
    from env0_posttrain.train import plot_training_curves, sanity_probe, train_lora

    rows = ctx.store.load_sft_rows(ctx.run_id)
    if not rows:
        raise RuntimeError(f"run {ctx.run_id}: no SFT rows; materialize sft_rows first")
    base = ensure_base_student(ctx.spec, ctx.store, ctx.run_id, ctx.paths)
    train_id = ctx.store.start_training(ctx.run_id)
    out_dir = ctx.artifacts("adapter", train_id)

    def on_log(m: dict) -> None:
        ctx.store.log_training_metrics(train_id, ctx.run_id, int(m.get("step", 0)), m)

    try:
        result = train_lora(rows, None, ctx.spec.lora, base, out_dir, on_log=on_log, base_ref=ctx.paths.rel(base))
    except Exception as err:
        ctx.store.finish_training(train_id, "failed", None, None, {"error": repr(err)})
        raise
    revision = file_digest(result.adapter_dir / "adapter_model.safetensors")
    probe = sanity_probe(base, result.adapter_dir, rows, n=8)
    plots = plot_training_curves(result.metrics, ctx.artifacts("adapter", "plots"))
    summary = result.model_dump(mode="json", exclude={"metrics"})
    ctx.store.finish_training(train_id, "finished", str(result.adapter_dir), revision,
                              summary | {"probe": probe.model_dump(mode="json")})
    return StageResult(
        metadata={
            "train_id": train_id, "adapter_dir": result.adapter_dir, "revision": revision, "base": str(base),
            "steps": result.steps, "first_train_loss": result.first_train_loss, "final_train_loss": result.final_train_loss,
            "final_eval_loss": result.final_eval_loss, "best_step": result.best_step, "runtime_s": round(result.runtime_s, 1),
            "train_tokens": result.train_tokens, "trainable_params": result.trainable_params,
            "checkpointing": _checkpointing_note(result.memory_plan),
            **{f"plot_{p.stem}": p for p in plots},
        },
        data_version=revision,
        checks=[CheckOutcome("adapter_learned", probe.passed, probe.reason, probe.model_dump(mode="json"))],
    )


def _checkpointing_note(plan: dict | None) -> str:
    from env0_posttrain.train.memory_plan import MemoryPlan

    return MemoryPlan.model_validate(plan).describe() if plan else "none (CPU)"


# evals -------------------------------------------------------------------------------------
def evaluate_arm(ctx: StageContext, arm: str) -> StageResult:
    from env0_posttrain.base_eval_reuse import rollout_or_reuse
    from env0_posttrain.models import arm_endpoint, base_student_identity, rollout_settings

    splits = ("eval", "heldout") if ctx.spec.tasks.n_heldout else ("eval",)
    tasks = load_tasks(ctx, splits)
    endpoint = arm_endpoint(ctx.spec, arm, ctx.store, ctx.run_id, ctx.paths, tasks)
    served: dict[str, Any] = {}
    if ctx.spec.hosting.kind == "openai_compatible" and arm in ("base", "sft"):  # listed name, then probe, first
        from env0_posttrain.evaluate.served import guard_served_arm

        served = guard_served_arm(ctx.spec, arm, endpoint, load_tasks(ctx, ("train",)))
    settings = rollout_settings(ctx.spec, arm)
    round_id, episodes, summary = rollout_or_reuse(
        ctx.store, ctx.run_id, arm, lambda: base_student_identity(ctx.spec, ctx.store, ctx.run_id, ctx.paths, endpoint),
        endpoint, settings, tasks, ctx.spec.eval.trials, code_version("agent", "workspace", "tasks"),
        lambda: _rollout(ctx, arm, tasks, ctx.spec.eval.trials, endpoint, settings))
    meta = _rollout_metadata(round_id, episodes, summary) | {"model": endpoint.model} | served
    if summary.get("reused_from"):
        src = summary["reused_from"]
        ctx.log.info(f"{arm}: reused round {src['round_id']} of run {src['run_id']} (same student, tasks, trials, "
                     "sampling and harness budget); no episode was run")
        meta |= {"reused_from_run": src["run_id"], "reused_from_round": src["round_id"]}
    ctx.store.record_eval_result(round_id, ctx.run_id, arm, endpoint.model, meta["episodes"], meta["strict_passes"], meta)
    return StageResult(metadata=meta, data_version=_episodes_version(episodes), checks=[_unscored_check(episodes)])


# report ------------------------------------------------------------------------------------
def write_report(ctx: StageContext) -> StageResult:
    from env0_posttrain.evaluate import build_report, report_metadata

    episodes, rounds = [], {}
    for arm in ARMS_ON_EVAL:
        rid = ctx.store.latest_round(ctx.run_id, arm)
        if rid:
            rounds[arm] = rid
            episodes += ctx.store.load_episodes(rid)
    splits = ("eval", "heldout") if ctx.spec.tasks.n_heldout else ("eval",)
    split_of = ctx.store.task_splits(ctx.run_id)
    tasks = load_tasks(ctx, splits)
    training = ctx.store.latest_training(ctx.run_id)
    rl_training = ctx.store.latest_training(f"{ctx.run_id}:rl") if "rl" in rounds else None
    info = ctx.store.task_set_info(ctx.run_id) or {}
    lineage = {
        "run_id": ctx.run_id, "run_spec_digest": ctx.spec.digest(), "task_set_digest": info.get("digest"),
        "teacher": ctx.spec.teacher.model, "student": ctx.spec.student.model,
        "adapter_revision": training["revision"] if training else None,
        "train_id": training["train_id"] if training else None, "eval_rounds": rounds,
        **({"rl_adapter_revision": rl_training["revision"], "rl_train_id": rl_training["train_id"]} if rl_training else {}),
        "code_version": code_version("workspace", "tasks", "agent", "sft", "train", "evaluate"),
        "budget": ctx.spec.budget_line(),
    }
    from env0_posttrain.base_eval_reuse import reused_from

    if (src := reused_from(ctx.store, rounds.get("base"))) is not None:
        lineage["base_eval_reused_from"] = f"run {src['run_id']} (round {src['round_id']})"
    history = [
        {"timestamp": h["created_at"], "arm": h["arm"], "pass_rate": h["pass_rate"], "run_id": ctx.run_id}
        for h in ctx.store.eval_history(ctx.run_id) if h["round_id"] not in rounds.values()
    ]
    stamp = time.strftime("%Y%m%dT%H%M%S")
    report_dir = ctx.artifacts("report", stamp)
    rep = build_report(
        episodes, tasks, report_dir, splits=split_of,
        training_metrics=ctx.store.training_metrics(training["train_id"]) if training else [],
        ledger=info.get("ledger", []), lineage=lineage, history=history, run_id=ctx.run_id, seed=ctx.spec.tasks.seed,
        rl_training_metrics=ctx.store.training_metrics(rl_training["train_id"]) if rl_training else [],
    )
    meta = report_metadata(rep)
    ctx.store.record_report(ctx.run_id, rep.headline, rep.markdown, str(report_dir), meta["numbers"])
    latest = ctx.paths.artifacts(ctx.run_id) / "report" / "LATEST"
    latest.write_text(stamp + "\n")
    return StageResult(
        metadata={
            "headline": rep.headline, "verdict": meta["verdict"], "report_html": Path(meta["files"]["report.html"]),
            "report_md": Path(meta["files"]["report.md"]), **{k: v for k, v in meta["numbers"].items() if v is not None},
            **{f"plot_{k}": Path(v) for k, v in meta["plots"].items()},
        },
        data_version=content_hash(meta["numbers"]),
        markdown={"report": meta["markdown_inline"]},
    )
