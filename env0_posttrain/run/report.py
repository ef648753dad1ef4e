"""The comparison_report stage: every arm's eval round into the paired report (Markdown, HTML, plots)."""

from __future__ import annotations

import time
from pathlib import Path

from env0_posttrain.run.context import StageContext, StageResult, code_version, content_hash, eval_splits, load_tasks

ARMS_ON_EVAL = ("base", "sft", "teacher_eval", "rl")


def write_report(ctx: StageContext) -> StageResult:
    from env0_posttrain.evaluate import build_report, report_metadata
    from env0_posttrain.evaluate.explorer import PAGE as EXPLORER_PAGE, write_explorer

    episodes, rounds = [], {}
    for arm in ARMS_ON_EVAL:
        rid = ctx.store.latest_round(ctx.run_id, arm)
        if rid:
            rounds[arm] = rid
            episodes += ctx.store.load_episodes(rid)
    splits = eval_splits(ctx)
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
    from env0_posttrain.run.base_eval_reuse import reused_from

    if (src := reused_from(ctx.store, rounds.get("base"))) is not None:
        lineage["base_eval_reused_from"] = f"run {src['run_id']} (round {src['round_id']})"
    history = [
        {"timestamp": h["created_at"], "arm": h["arm"], "pass_rate": h["pass_rate"], "run_id": ctx.run_id}
        for h in ctx.store.eval_history(ctx.run_id) if h["round_id"] not in rounds.values()
    ]
    stamp = time.strftime("%Y%m%dT%H%M%S")
    report_dir = ctx.artifacts("report", stamp)
    explorer = write_explorer(ctx.store, ctx.run_id, report_dir / "explorer", lineage=lineage)
    rep = build_report(
        episodes, tasks, report_dir, splits=split_of,
        training_metrics=ctx.store.training_metrics(training["train_id"]) if training else [],
        ledger=info.get("ledger", []), lineage=lineage, history=history, run_id=ctx.run_id, seed=ctx.spec.tasks.seed,
        rl_training_metrics=ctx.store.training_metrics(rl_training["train_id"]) if rl_training else [],
        explorer=EXPLORER_PAGE,
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
            "explorer": explorer.index_html, "explorer_tasks": explorer.tasks, "explorer_episodes": explorer.episodes,
            "explorer_mb": round(explorer.bytes / 1e6, 3),
        },
        links={"explorer_url": explorer.index_html.resolve().as_uri()},
        data_version=content_hash(meta["numbers"]),
        markdown={"report": meta["markdown_inline"]},
    )
