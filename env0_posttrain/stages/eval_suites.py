"""The eval_suites stage: every named suite of the spec drawn, imported and stored with its boundary ledger.

Its own asset between task_set and the evals, so adding or changing a suite re-runs only this and the evals,
never the teacher, the SFT rows or the training upstream of them.
"""

from __future__ import annotations

import time

from env0_posttrain.util.markdown_table import records_table
from env0_posttrain.stages.context import StageContext, StageResult, content_hash, load_tasks


def build_eval_suites(ctx: StageContext) -> StageResult:
    from env0_posttrain.store.suites import replace_suites
    from env0_posttrain.stages.task_set import import_cache
    from env0_posttrain.spec.suites import resolve
    from env0_posttrain.tasks.suites import boundary, build_suite

    t0 = time.time()
    train = load_tasks(ctx, ("train",))
    paths = ctx.task_paths
    stored, ledger = [], []
    for suite in ctx.spec.suites:
        built = build_suite(
            suite, train=train, families=ctx.spec.tasks.families, templates=ctx.spec.tasks.templates,
            source=resolve(ctx.spec, suite.source) if suite.source is not None else None, anchor=paths.packages,
            cache_dir=import_cache(ctx), progress=ctx.log.info, env0_root=paths.env0_root,
            now=ctx.spec.env0.pinned_now())
        if not built.tasks:
            raise ValueError(f"suite {suite.name}: no task left ({len(built.dropped)} dropped: "
                             f"{'; '.join(f'{k}: {v}' for k, v in list(built.dropped.items())[:5])})")
        edge = boundary(suite.kind, train, built.tasks, len(built.dropped), built.considered)
        edge["dropped_reasons"] = dict(list(built.dropped.items())[:200])
        digest = content_hash(sorted(t.content_digest() for t in built.tasks))
        stored.append((suite.name, suite.kind, digest, edge, built.tasks))
        ledger.append({"suite": suite.name, **{k: v for k, v in edge.items() if k != "dropped_reasons"}})
    replace_suites(ctx.store, ctx.run_id, stored)
    digest = content_hash([(name, d) for name, _, d, _, _ in stored])
    return StageResult(
        metadata={"suites": {name: len(tasks) for name, _, _, _, tasks in stored}, "suites_digest": digest,
                  "seconds": round(time.time() - t0, 2)},
        markdown={"boundary": records_table(ledger)} if ledger else {},
        data_version=digest,
    )
