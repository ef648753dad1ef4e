"""The task_set stage: tasks drawn and split from the run spec, verified at generation, stored by split."""

from __future__ import annotations

import time

from env0_posttrain.util.markdown_table import records_table
from env0_posttrain.stages.context import CheckOutcome, StageContext, StageResult, content_hash


def import_cache(ctx: StageContext):
    """Imported env0 packages, shared by every run of the data dir (keyed by package name, content hash, seed and
    importer code), so a backfill clone or a suite re-reading a package does not import it again."""
    return ctx.paths.root / "cache" / "env0-imports"


def build_task_set(ctx: StageContext) -> StageResult:
    from env0_posttrain.tasks import make_task_set, split_overlap, write_tasks_jsonl
    from env0_posttrain.tasks.ledger import dropped_text

    t0 = time.time()
    selection = ctx.spec.tasks
    if selection.source is not None:  # relative to env0.root when the spec names one
        selection = selection.model_copy(update={"source": ctx.task_paths.packages})
    ts = make_task_set(selection, import_cache=import_cache(ctx), progress=ctx.log.info,
                       env0_root=ctx.task_paths.env0_root, env0_now=ctx.spec.env0.pinned_now())
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
            "env0_root": str(ctx.spec.env0.root) if ctx.spec.env0.root else None,
            "seconds": round(time.time() - t0, 2),
        },
        markdown={"ledger": records_table([r | {"dropped_reasons": dropped_text(r["dropped_reasons"])} for r in ledger])},
        data_version=digest,
        checks=[CheckOutcome("split_disjoint", not problems, "; ".join(problems[:5]) or "splits are disjoint",
                             {"problems": problems[:50]})],
    )
