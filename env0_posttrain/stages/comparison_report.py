"""The comparison_report stage: every arm's newest eval rounds gathered into one `ReportInputs` and built into the
paired report (Markdown, HTML, plots). A run with eval suites gets one report over every suite, whose details are
about the lead suite, and each suite with episodes gets the whole report on its own episodes in suites/<name>/."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from env0_posttrain.spec.suites import DEFAULT_SUITE, eval_suite_names, round_arm, split_round_arm
from env0_posttrain.stages.context import StageContext, StageResult, code_version, content_hash, eval_splits, load_tasks
from env0_posttrain.util.torch_threads import resolve as resolve_threads

if TYPE_CHECKING:
    from env0_posttrain.evaluate.report_model import ReportInputs

ARMS = ("base", "sft", "teacher_eval", "rl", "onpolicy")
SUITES_DIR = "suites"  # each suite's full report: <report folder>/suites/<name>/report.{md,html,json}
CHARS_PER_TOKEN = 4  # a rough estimate of an oracle call's completion tokens (JSON arguments)


def write_report(ctx: StageContext) -> StageResult:
    from env0_posttrain.evaluate import ReportInputs, build_report, report_metadata
    from env0_posttrain.evaluate.explorer import PAGE as EXPLORER_PAGE, write_explorer
    from env0_posttrain.evaluate.report_model import SuitesView

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


def budget_notes(ctx: StageContext, tasks: list, episodes: list = ()) -> list[str]:
    """Where an arm's step or token limit is below what the oracle's replay of a task takes, or below the model
    calls the teacher's passing episodes on the suite took."""
    need_steps = [len(t.oracle) + 1 for t in tasks]  # one call per step, then the final reply
    need_tokens = [max((len(json.dumps({"name": c.name, "arguments": c.arguments})) // CHARS_PER_TOKEN
                        for c in t.oracle), default=0) for t in tasks]
    notes = []
    for arms, (steps, tokens) in (("teacher_eval", ctx.spec.teacher_limits()), ("base, sft, rl", ctx.spec.eval_limits())):
        short_s = sum(n > steps for n in need_steps)
        short_t = sum(n > tokens for n in need_tokens)
        if short_s:
            notes.append(f"{arms}: {steps} steps is below the oracle's need on {short_s} of {len(tasks)} tasks "
                         f"(up to {max(need_steps)} model calls)")
        if short_t:
            notes.append(f"{arms}: {tokens} tokens per call is below the oracle's longest call on {short_t} of "
                         f"{len(tasks)} tasks (about {max(need_tokens)} tokens at {CHARS_PER_TOKEN} characters each)")
    from env0_posttrain.evaluate.metrics import n_steps

    steps = ctx.spec.eval_limits()[0]
    teacher = [n_steps(e) for e in episodes if e.arm == "teacher_eval" and e.passed]
    if over := sum(n > steps for n in teacher):
        notes.append(f"base, sft, rl: {steps} steps is below what {over} of the teacher's {len(teacher)} passing "
                     f"episodes took (up to {max(teacher)} model calls)")
    return notes


def rows_note(ctx: StageContext, tasks: list, train_ids: set[str], skipped: dict[str, str] | None) -> str | None:
    """The suite's training tasks whose SFT rows were dropped or cut to windows for lora.max_seq_length (None:
    the suite holds no training task, or sft_rows wrote no record of its skips)."""
    mine = [t.id for t in tasks if t.id in train_ids]
    if not mine or skipped is None:
        return None
    hit: dict[str, int] = {}
    for tid in mine:
        if tid in skipped:
            hit[skipped[tid]] = hit.get(skipped[tid], 0) + 1
    if not hit:
        return (f"SFT rows: none of this suite's {len(mine)} training tasks lost its row to length or curation "
                f"(lora.max_seq_length {ctx.spec.lora.max_seq_length}).")
    return (f"SFT rows of this suite's {len(mine)} training tasks not trained on as played: "
            + ", ".join(f"{n} {why}" for why, n in sorted(hit.items()))
            + f" (lora.max_seq_length {ctx.spec.lora.max_seq_length}).")


def skipped_rows(ctx: StageContext) -> dict[str, str] | None:
    """task id -> why its SFT row was skipped (written by sft_rows as sft/skipped.json); None without the file."""
    path = ctx.paths.artifacts(ctx.run_id) / "sft" / "skipped.json"
    return json.loads(path.read_text()) if path.is_file() else None


def suite_parts(ctx: StageContext, alpha: float = 0.05, n_boot: int = 10_000):
    """(SuiteNumbers per suite, {suite: (episodes, tasks, rounds)}) for every suite the spec names."""
    from env0_posttrain.evaluate.report import suite_numbers
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
                                     seed=ctx.spec.tasks.seed, budget_notes=budget_notes(ctx, tasks, episodes),
                                     rows_note=rows_note(ctx, tasks, train_ids, skipped)))
        parts[name] = (episodes, tasks, rounds)
    return numbers, parts


def lead_suite(numbers: list) -> tuple[str, str]:
    """The suite the main report's details are about, and the one line that says why: the first unseen suite (in
    the spec's order) with base and adapter episodes, since a gain there is the one that can generalize."""
    paired = [s for s in numbers if s.paired is not None]
    unseen = [s for s in paired if s.seen == "unseen"]
    if unseen:
        why = "the first suite unseen by the training set with base and adapter episodes: a gain there is what generalizes"
        return unseen[0].name, _lead_line(unseen[0].name, why)
    if paired:
        return paired[0].name, _lead_line(paired[0].name, "no unseen suite has base and adapter episodes, so the first "
                                                           "suite that has")
    name = next((s.name for s in numbers if s.passes), numbers[0].name)
    return name, _lead_line(name, "no suite has both base and adapter episodes; the first suite with episodes")


def _lead_line(name: str, why: str) -> str:
    return f"The sections below detail suite {name} ({why}); each suite's full report is linked in its section above."


def suite_links(parts: dict) -> dict[str, str]:
    """Suite name -> its full report, relative to the main report's folder (a suite with no episodes has none)."""
    return {name: f"{SUITES_DIR}/{name}/report.html" for name, (episodes, _, _) in parts.items() if episodes}


def write_suite_reports(run: "ReportInputs", parts: dict, report_dir: Path, history_of) -> dict[str, str]:
    """Every suite with episodes gets the whole comparison report on its own episodes in <report_dir>/suites/<name>/
    (its own plots, its own trend), headed by its suite section and a link back; returns name -> its report.html.
    `run`: the run's report inputs; `history_of(name, rounds)`: the suite's earlier eval results."""
    from env0_posttrain.evaluate import build_report
    from env0_posttrain.evaluate.report_model import SuitesView

    out = {}
    for s in run.suites.numbers:
        episodes, tasks, rounds = parts[s.name]
        if not episodes:
            continue
        own = run.model_copy(update={
            "episodes": episodes, "tasks": tasks, "splits": {t.id: s.name for t in tasks},
            "lineage": run.lineage | {"suite": s.name, "eval_rounds": rounds}, "history": history_of(s.name, rounds),
            "explorer": f"../../{run.explorer}",
            "suites": SuitesView(numbers=[s], own=True, note="[Back to the run's report over every suite](../../report.html)."),
        })
        out[s.name] = build_report(own, report_dir / SUITES_DIR / s.name).files["report.html"]
    return out
