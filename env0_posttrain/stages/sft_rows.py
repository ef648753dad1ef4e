"""The sft_rows stage: the teacher round converted, curated and validated into training rows (chat rows
here; `sft.format: tito` hands over to stages/sft_tito.py)."""

from __future__ import annotations

import json
from pathlib import Path

from env0_posttrain.util.markdown_table import records_table
from env0_posttrain.stages.context import (
    MAX_OVERLENGTH_FRACTION,
    CheckOutcome,
    StageContext,
    StageResult,
    content_hash,
    load_tasks,
)
from env0_posttrain.stages.teacher_trajectories import export_results


def build_sft_rows(ctx: StageContext) -> StageResult:
    from env0_posttrain.stages.arms import load_student_tokenizer
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
        from env0_posttrain.stages.sft_tito import build_tito_sft_rows

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
    write_skipped(out, report.curation.skipped_rows, trl)
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
        markdown={"skipped": records_table([{"reason": k, "rows": v} for k, v in skipped.items()])},
    )


def write_skipped(out: Path, skipped_rows, trl) -> None:
    """task id -> why its row was not trained on as played (dropped, or cut into windows for max_seq_length), so
    the report can count it per eval suite instead of leaving it to the asset's metadata."""
    from env0_posttrain.util.fsutil import atomic_write_text

    def task_of(key: str) -> str:
        return key.split("/")[2] if key.count("/") >= 3 else key

    why = {task_of(r.source.episode_key): "cut into windows" for r in trl if (r.source.window or 0) > 0}
    why |= {task_of(s.episode_key): s.reason for s in skipped_rows if s.episode_key}
    atomic_write_text(out / "skipped.json", json.dumps(why, sort_keys=True))


def _not_tito_check() -> CheckOutcome:
    from env0_posttrain.stages.sft_tito import not_tito_check

    return not_tito_check("chat rows (sft.format messages) carry no token ids")
