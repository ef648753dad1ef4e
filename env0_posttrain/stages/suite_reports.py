"""The report's per-suite part: each suite's newest rounds of every arm, its boundary ledger, and what its tasks
ask of the arms' budgets (the step and token limits against the oracle's replay) and of lora.max_seq_length."""

from __future__ import annotations

import json

from env0_posttrain.stages.context import StageContext, load_tasks
from env0_posttrain.spec.suites import DEFAULT_SUITE, eval_suite_names, round_arm

ARMS = ("base", "sft", "teacher_eval", "rl")
CHARS_PER_TOKEN = 4  # a rough estimate of an oracle call's completion tokens (JSON arguments)


def suite_rounds(ctx: StageContext, suite: str) -> dict[str, str]:
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
    from env0_posttrain.evaluate.suites_report import suite_numbers
    from env0_posttrain.stages.evals import suite_tasks, suite_trials
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


SUITES_DIR = "suites"  # each suite's full report: <report folder>/suites/<name>/report.{md,html,json}


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


def write_suite_reports(numbers: list, parts: dict, report_dir, history_of, explorer: str, lineage: dict,
                        **common) -> dict[str, str]:
    """Every suite with episodes gets the whole comparison report on its own episodes in <report_dir>/suites/<name>/
    (its own plots, its own trend), headed by its suite table and a link back; returns name -> its report.html.
    `history_of(name, rounds)`: the suite's earlier eval results; `common`: build_report's shared arguments."""
    from env0_posttrain.evaluate import build_report
    from env0_posttrain.evaluate.suites_report import suite_section, suites_headline

    out = {}
    for s in numbers:
        episodes, tasks, rounds = parts[s.name]
        if not episodes:
            continue
        folder = report_dir / SUITES_DIR / s.name
        section = "\n\n".join([*suite_section(s, level="##"), "[Back to the run's report over every suite]"
                               "(../../report.html)."]) + "\n"
        rep = build_report(episodes, tasks, folder, splits={t.id: s.name for t in tasks},
                           lineage=lineage | {"suite": s.name, "eval_rounds": rounds},
                           history=history_of(s.name, rounds), explorer=f"../../{explorer}",
                           suites=(suites_headline([s]), section), **common)
        out[s.name] = rep.files["report.html"]
    return out
