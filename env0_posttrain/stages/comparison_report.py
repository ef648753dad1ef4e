"""The comparison_report stage: every arm's newest eval rounds gathered into one `ReportInputs` and built into the
paired report (Markdown, HTML, plots). A run with eval suites gets one report over every suite, whose details are
about the lead suite, and each suite with episodes gets the whole report on its own episodes in suites/<name>/.

The stage gathers (the store's rounds, episodes, training records, the spec's limits, sft_rows' skips) and writes;
what the report says about them is decided in evaluate/ (lead_suite, budget_notes, row_notes, suite_reports,
surfaces)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from env0_posttrain.spec.suites import DEFAULT_SUITE, eval_suite_names, round_arm, split_round_arm
from env0_posttrain.stages.context import StageContext, StageResult, code_version, content_hash, eval_splits, load_tasks
from env0_posttrain.util.torch_threads import resolve as resolve_threads

ARMS = ("base", "sft", "teacher_eval", "rl", "onpolicy")


def write_report(ctx: StageContext) -> StageResult:
    from env0_posttrain.evaluate import ReportInputs, build_report, report_metadata
    from env0_posttrain.evaluate.explorer import PAGE as EXPLORER_PAGE, write_explorer
    from env0_posttrain.evaluate.lead_suite import lead_suite
    from env0_posttrain.evaluate.report_model import SuitesView
    from env0_posttrain.evaluate.suite_reports import suite_links, write_suite_reports

    view, parts = None, {}
    if ctx.spec.suites:
        numbers, parts = suite_parts(ctx)
        primary, why = lead_suite(numbers)
        episodes, tasks, rounds = parts[primary]
        splits = {t.id: primary for t in tasks}
        view = SuitesView(numbers=numbers, links=suite_links(parts), note=why)
    else:
        primary, rounds = DEFAULT_SUITE, suite_rounds(ctx, DEFAULT_SUITE)
        episodes = [e for rid in rounds.values() for e in ctx.store.load_episodes(rid)]
        splits, tasks = ctx.store.task_splits(ctx.run_id), load_tasks(ctx, eval_splits(ctx))
    training = ctx.store.latest_training(ctx.run_id)
    rl_training = ctx.store.latest_training(f"{ctx.run_id}:rl") if "rl" in rounds else None
    onpolicy_training = ctx.store.latest_training(f"{ctx.run_id}:onpolicy") if "onpolicy" in rounds else None
    info = ctx.store.task_set_info(ctx.run_id) or {}
    lineage = _lineage(ctx, episodes, rounds, training, rl_training, info, parts)
    if onpolicy_training:
        lineage |= {"onpolicy_adapter_revision": onpolicy_training["revision"],
                    "onpolicy_train_id": onpolicy_training["train_id"]}
    evals = ctx.store.eval_history(ctx.run_id)

    def history_of(shown: str, own: dict) -> list[dict]:
        """The suite's earlier eval results (its trend), less the rounds the report is about."""
        return [{"timestamp": h["created_at"], "arm": arm, "pass_rate": h["pass_rate"], "run_id": ctx.run_id}
                for h in evals if h["round_id"] not in own.values()
                for arm, suite in [split_round_arm(h["arm"])] if suite == shown]

    stamp = time.strftime("%Y%m%dT%H%M%S")
    report_dir = ctx.artifacts("report", stamp)
    explorer = write_explorer(ctx.store, ctx.run_id, report_dir / "explorer", lineage=lineage)
    inputs = ReportInputs(
        episodes=episodes, tasks=tasks, splits=splits, lineage=lineage, history=history_of(primary, rounds),
        training_metrics=ctx.store.training_metrics(training["train_id"]) if training else [],
        rl_training_metrics=ctx.store.training_metrics(rl_training["train_id"]) if rl_training else [],
        onpolicy_rounds=_rounds_of(onpolicy_training),
        ledger=info.get("ledger", []), run_id=ctx.run_id, seed=ctx.spec.tasks.seed, suites=view,
        explorer=EXPLORER_PAGE,
    )
    suite_files = write_suite_reports(inputs, parts, report_dir, history_of) if view is not None else {}
    rep = build_report(inputs, report_dir)
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
            **({"details_suite": primary} if view is not None else {}),
            **{f"suite_report_{name}": Path(f) for name, f in suite_files.items()},
        },
        data_version=content_hash(meta["numbers"]),
        markdown={"report": meta["markdown_inline"]},
    )


def _rounds_of(training: dict | None) -> list[dict]:
    """The on-policy stage's per-round figures, kept in its training record."""
    if not training:
        return []
    result = training.get("result") or training.get("result_json") or {}
    if isinstance(result, str):
        result = json.loads(result)
    return list(result.get("rounds") or [])


def _lineage(ctx: StageContext, episodes: list, rounds: dict, training: dict | None, rl_training: dict | None,
             info: dict, parts: dict) -> dict:
    """Where the report's numbers came from: the run, its spec, task set, adapter, rounds, code and budgets."""
    from env0_posttrain.evaluate.surfaces import arm_surfaces
    from env0_posttrain.store.base_eval_reuse import reused_from

    surfaces = arm_surfaces(episodes, ctx.spec.compare_across_surfaces)
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
    if built_on := ((ctx.store.base_model(ctx.run_id) or {}).get("info") or {}).get("built_on"):
        lineage["base_built_on"] = built_on  # a tiny base's weights carry the kernels of the machine that built it
    if (src := reused_from(ctx.store, rounds.get("base"))) is not None:
        lineage["base_eval_reused_from"] = f"run {src['run_id']} (round {src['round_id']})"
    return lineage


def student_devices(ctx: StageContext, rounds: dict, training: dict | None) -> str | None:
    """Where the local student trained and played each eval arm, as recorded by those stages ('cuda (NVIDIA H100
    80GB HBM3)', 'cpu (AVX512 kernels)'); None when nothing recorded a device (a served student)."""
    parts = []
    result = (training or {}).get("result", {})
    if trained_on := result.get("device_label") or result.get("device"):
        parts.append(f"training: {trained_on}")
    for arm, rid in rounds.items():
        device = (ctx.store.eval_summary(rid) or {}).get("device")
        if device:
            parts.append(f"{arm}: {device}")
    return "; ".join(parts) or None


def suite_rounds(ctx: StageContext, suite: str) -> dict[str, str]:
    """arm -> the newest round of the suite (the default split's rounds keep the plain arm names)."""
    out = {}
    for arm in ARMS:
        rid = ctx.store.latest_round(ctx.run_id, round_arm(arm, suite))
        if rid:
            out[arm] = rid
    return out


def skipped_rows(ctx: StageContext) -> dict[str, str] | None:
    """task id -> why its SFT row was skipped (written by sft_rows as sft/skipped.json); None without the file."""
    path = ctx.paths.artifacts(ctx.run_id) / "sft" / "skipped.json"
    return json.loads(path.read_text()) if path.is_file() else None


def suite_parts(ctx: StageContext, alpha: float = 0.05, n_boot: int = 10_000):
    """(SuiteNumbers per suite, {suite: (episodes, tasks, rounds)}) for every suite the spec names."""
    from env0_posttrain.evaluate.budget_notes import budget_notes
    from env0_posttrain.evaluate.report import suite_numbers
    from env0_posttrain.evaluate.row_notes import rows_note
    from env0_posttrain.stages.eval_trajectories import suite_tasks, suite_trials
    from env0_posttrain.store.suites import suite_boundaries
    from env0_posttrain.tasks.suites import boundary

    train = load_tasks(ctx, ("train",))
    train_ids = {t.id for t in train}
    stored = suite_boundaries(ctx.store, ctx.run_id)
    skipped = skipped_rows(ctx)
    numbers, parts = [], {}
    for name in eval_suite_names(ctx.spec):
        tasks = suite_tasks(ctx, name)
        rounds = suite_rounds(ctx, name)
        episodes = [e for rid in rounds.values() for e in ctx.store.load_episodes(rid)]
        edge = boundary("split", train, tasks) if name == DEFAULT_SUITE else stored.get(name, {})
        numbers.append(suite_numbers(name, episodes, edge, suite_trials(ctx, name), alpha=alpha, n_boot=n_boot,
                                     seed=ctx.spec.tasks.seed,
                                     budget_notes=budget_notes(tasks, ctx.spec.teacher_limits(), ctx.spec.eval_limits(),
                                                               episodes),
                                     rows_note=rows_note(tasks, train_ids, skipped, ctx.spec.lora.max_seq_length)))
        parts[name] = (episodes, tasks, rounds)
    return numbers, parts
