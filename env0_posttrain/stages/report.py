"""The comparison_report stage: every arm's eval round into the paired report (Markdown, HTML, plots)."""

from __future__ import annotations

import time
from pathlib import Path

from env0_posttrain.stages.context import StageContext, StageResult, code_version, content_hash, eval_splits, load_tasks
from env0_posttrain.util.torch_threads import resolve as resolve_threads

ARMS_ON_EVAL = ("base", "sft", "teacher_eval", "rl")


def write_report(ctx: StageContext) -> StageResult:
    from env0_posttrain.evaluate import build_report, report_metadata
    from env0_posttrain.evaluate.explorer import PAGE as EXPLORER_PAGE, write_explorer

    episodes, rounds = [], {}
    suites = suite_numbers = primary = None
    parts: dict = {}
    if ctx.spec.suites:
        from env0_posttrain.evaluate.suites_report import suites_headline, suites_markdown
        from env0_posttrain.stages.suite_reports import lead_suite, suite_links, suite_parts

        suite_numbers, parts = suite_parts(ctx)
        primary, why = lead_suite(suite_numbers)
        episodes, tasks, rounds = parts[primary]
        split_of = {t.id: primary for t in tasks}
        suites = (suites_headline(suite_numbers), suites_markdown(suite_numbers, suite_links(parts)) + f"\n{why}\n")
    else:
        for arm in ARMS_ON_EVAL:
            rid = ctx.store.latest_round(ctx.run_id, arm)
            if rid:
                rounds[arm] = rid
                episodes += ctx.store.load_episodes(rid)
        split_of = ctx.store.task_splits(ctx.run_id)
        tasks = load_tasks(ctx, eval_splits(ctx))
    surfaces = arm_surfaces(episodes, ctx.spec.compare_across_surfaces)
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
        "budget": ctx.spec.budget_line(), "torch_threads": str(resolve_threads(ctx.spec.torch_threads)),
        "surfaces": ", ".join(f"{arm}: {s}" for arm, s in surfaces.items()) or ctx.spec.surface_line(),
        **({"env0_root": str(ctx.spec.env0.root)} if ctx.spec.env0.root else {}),
        **({"suite_rounds": {name: r for name, (_, _, r) in parts.items()}} if ctx.spec.suites else {}),
    }
    if (devices := student_devices(ctx, rounds, training)) is not None:
        lineage["student_device"] = devices
    from env0_posttrain.store.base_eval_reuse import reused_from

    if (src := reused_from(ctx.store, rounds.get("base"))) is not None:
        lineage["base_eval_reused_from"] = f"run {src['run_id']} (round {src['round_id']})"
    from env0_posttrain.spec.suites import DEFAULT_SUITE, split_round_arm

    evals = ctx.store.eval_history(ctx.run_id)

    def history_of(shown: str, own: dict) -> list[dict]:
        """The suite's earlier eval results (its trend), less the rounds the report is about."""
        return [{"timestamp": h["created_at"], "arm": arm, "pass_rate": h["pass_rate"], "run_id": ctx.run_id}
                for h in evals if h["round_id"] not in own.values()
                for arm, suite in [split_round_arm(h["arm"])] if suite == shown]

    stamp = time.strftime("%Y%m%dT%H%M%S")
    report_dir = ctx.artifacts("report", stamp)
    explorer = write_explorer(ctx.store, ctx.run_id, report_dir / "explorer", lineage=lineage)
    common = dict(
        training_metrics=ctx.store.training_metrics(training["train_id"]) if training else [],
        ledger=info.get("ledger", []), run_id=ctx.run_id, seed=ctx.spec.tasks.seed,
        rl_training_metrics=ctx.store.training_metrics(rl_training["train_id"]) if rl_training else [],
    )
    suite_files: dict[str, str] = {}
    if ctx.spec.suites:
        from env0_posttrain.stages.suite_reports import write_suite_reports

        suite_files = write_suite_reports(suite_numbers, parts, report_dir, history_of, EXPLORER_PAGE, lineage, **common)
    rep = build_report(
        episodes, tasks, report_dir, splits=split_of, lineage=lineage,
        history=history_of(primary if ctx.spec.suites else DEFAULT_SUITE, rounds), explorer=EXPLORER_PAGE,
        suites=suites, **common,
    )
    meta = report_metadata(rep)
    if suite_numbers is not None:
        from env0_posttrain.evaluate.suites_report import suites_numbers

        meta["numbers"] |= suites_numbers(suite_numbers)
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
            **({"details_suite": primary} if ctx.spec.suites else {}),
            **{f"suite_report_{name}": Path(f) for name, f in suite_files.items()},
        },
        data_version=content_hash(meta["numbers"]),
        markdown={"report": meta["markdown_inline"]},
    )


def arm_surfaces(episodes: list, compare_across: bool) -> dict[str, str]:
    """Which surface each arm's episodes acted through; arms on different surfaces are not compared unless the
    spec asks for it (compare_across_surfaces), and one arm's round never mixes surfaces."""
    seen: dict[str, set[str]] = {}
    for e in episodes:
        seen.setdefault(e.arm, set()).add(e.surface)
    mixed = {arm: sorted(s) for arm, s in seen.items() if len(s) > 1}
    if mixed:
        raise ValueError(f"an arm's eval round holds episodes of several surfaces: {mixed}")
    out = {arm: next(iter(s)) for arm, s in seen.items()}
    if len(set(out.values())) > 1 and not compare_across:
        raise ValueError(f"the arms acted through different surfaces ({out}); the report compares them only when the "
                         "run spec sets compare_across_surfaces: true")
    return out


def student_devices(ctx: StageContext, rounds: dict, training: dict | None) -> str | None:
    """Where the local student trained and played each eval arm, as recorded by those stages ('cuda (NVIDIA H100
    80GB HBM3)', 'cpu'); None when nothing recorded a device (a served student)."""
    parts = []
    if training and training.get("result", {}).get("device"):
        parts.append(f"training: {training['result']['device']}")
    for arm, rid in rounds.items():
        device = (ctx.store.eval_summary(rid) or {}).get("device")
        if device:
            parts.append(f"{arm}: {device}")
    return "; ".join(parts) or None
