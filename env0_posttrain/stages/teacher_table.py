"""The teacher-bounded table as a stage (no Dagster): the run and every run a teacher backfill cloned
from it (`<run_id>--<teacher slug>`, see orchestration/backfill.py), one row per teacher."""

from __future__ import annotations

import base64

from env0_posttrain.stages.context import StageContext, StageResult, content_hash

ARMS = ("teacher_eval", "sft", "rl", "onpolicy")


def backfilled_runs(ctx: StageContext) -> list[str]:
    return [ctx.run_id, *ctx.store.clone_run_ids(ctx.run_id)]


def build_teacher_table(ctx: StageContext) -> StageResult:
    from env0_posttrain.evaluate.teacher_table import plot_teacher_table, table_markdown, teacher_row

    rows, missing = [], []
    for run_id in backfilled_runs(ctx):
        spec = ctx.store.get_run(run_id)
        episodes = []
        for arm in ARMS:
            round_id = ctx.store.latest_round(run_id, arm)
            if round_id:
                episodes += ctx.store.load_episodes(round_id)
        row = teacher_row(run_id, spec.teacher.model, episodes, seed=ctx.spec.tasks.seed) if spec else None
        (rows.append(row) if row else missing.append(run_id))
    out = ctx.artifacts("teacher_table")
    md = table_markdown(rows)
    plot = plot_teacher_table(rows, out / "teacher_table.png")
    (out / "teacher_table.md").write_text(md + "\n" + (f"\n![teachers]({plot.name})\n" if plot else ""))
    inline = md + (f"\n\n![teachers](data:image/png;base64,{base64.b64encode(plot.read_bytes()).decode()})"
                   if plot else "")
    meta: dict = {"runs": [r.run_id for r in rows], "runs_without_teacher_eval": missing, "teachers": len(rows),
                  "table_md": out / "teacher_table.md"}
    if plot:
        meta["plot_teacher_table"] = plot
    for r in rows:
        meta[f"{r.teacher}.teacher_pass_rate_pct"] = round(100 * r.teacher_pass_rate.rate, 2)
        for s in r.students:
            meta[f"{r.teacher}.{s.arm}.pass_rate_pct"] = round(100 * s.pass_rate.rate, 2)
            meta[f"{r.teacher}.{s.arm}.gap_pp"] = round(100 * s.gap, 2)
    return StageResult(metadata=meta, data_version=content_hash([r.model_dump(mode="json") for r in rows]),
                       markdown={"teacher_table": inline})
