"""The sft_rows stage for `sft.format: tito`: token rows from captured ids, and the drift gate.

Each assistant turn becomes one row: the prompt ids exactly as the serving model saw them and the
ids it returned (`tito_source` native/auto), or the student's chat template re-rendering the turn
(retokenise/auto fallback). Rows carry their loss weight (`upweight_mode: weight`) or are repeated
(`repeat`). The `tito_drift` check re-renders every captured exchange with the student's template:
the TITO seed trained on ids its student never saw at inference, and this is where that shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from env0_posttrain.util.markdown_table import records_table
from env0_posttrain.stages.context import MAX_OVERLENGTH_FRACTION, CheckOutcome, StageContext, StageResult, content_hash
from env0_posttrain.util.fsutil import atomic_target

DRIFT_CHECK = "tito_drift"
MAX_LISTED = 20


def student_template(ctx: StageContext, tokenizer: Any) -> Any:
    """The student's chat template from the spec (`student.chat_template`) when one is given."""
    if ctx.spec.student.chat_template:
        tokenizer.chat_template = Path(ctx.spec.student.chat_template).read_text()
    return tokenizer


def not_tito_check(reason: str) -> CheckOutcome:
    """The drift check on a run whose rows are not TITO rows (the check is declared for every run)."""
    return CheckOutcome(DRIFT_CHECK, None, f"not checked: {reason}", {"checked": False})


def drift_outcome(results_path: Path, tokenizer: Any, drift_check_on: bool, retokenised: bool) -> CheckOutcome:
    """Blocks on drift unless `sft.drift_check` is off or the rows are re-rendered anyway (`tito_source: retokenise`)."""
    from env0_posttrain.sft import drift_check

    report = drift_check(results_path, tokenizer)
    drifted = report.drifted_rows
    summary = (f"{len(drifted)} of {report.n_rows} episodes drift: captured ids differ from the student's chat "
               f"template re-rendering ({report.n_exchanges_checked} exchanges with ids checked, "
               f"{report.n_exchanges_without_ids} without ids)")
    if report.ok and report.n_exchanges_checked:
        summary = (f"no drift: the {report.n_exchanges_checked} captured exchanges of {report.n_rows} episodes equal the "
                   f"student's chat template re-rendering ({report.n_exchanges_without_ids} without ids)")
    elif not report.n_exchanges_checked:
        summary = f"no captured ids to compare ({report.n_exchanges_without_ids} exchanges without ids)"
    blocking = drift_check_on and not retokenised
    passed: bool | None = report.ok or not blocking
    if report.ok and not report.n_exchanges_checked:
        passed = None  # nothing was compared: not a pass
    if not report.ok and not drift_check_on:
        summary += "; sft.drift_check is false, so this does not block"
    elif not report.ok and retokenised:
        summary += "; the rows are re-rendered with the student's template (tito_source retokenise), so it does not block"
    by_part: dict[str, int] = {}
    for d in report.drifts:
        by_part[d.part] = by_part.get(d.part, 0) + 1
    return CheckOutcome(DRIFT_CHECK, passed, summary, {
        "checked": True, "blocking": blocking, "episodes": report.n_rows, "exchanges_checked": report.n_exchanges_checked,
        "exchanges_without_ids": report.n_exchanges_without_ids, "drifted_episodes": len(drifted),
        "drifted_exchanges_by_part": by_part, "drifts": [str(d) for d in report.drifts[:MAX_LISTED]],
        "problems": [str(p) for p in report.problems[:MAX_LISTED]],
    })


def drift_gate(spec: Any, results_path: Path, tokenizer: Any) -> CheckOutcome:
    """The run spec's drift check: `sft.drift_check` and `sft.tito_source` decide whether drift blocks."""
    return drift_outcome(results_path, tokenizer, spec.sft.drift_check, spec.sft.tito_source == "retokenise")


def training_row(row: Any) -> dict[str, Any]:
    """A TitoRow as stored and trained: ids + completion mask + weight, with where it came from."""
    return {**row.ids_and_mask(), "weight": row.weight, "turn": row.turn, "origin": row.origin,
            "source": row.source.model_dump(mode="json")}


def write_tito_parquet(rows: list, path: Path) -> Path:
    """The {input_ids, output_ids} (+ weight) parquet that verl's TitoSFTDataset-style readers take."""
    from datasets import Dataset

    with atomic_target(path) as tmp:
        Dataset.from_list([{"input_ids": r.input_ids, "output_ids": r.output_ids, "weight": r.weight, "turn": r.turn,
                            "origin": r.origin, "episode_key": r.source.episode_key} for r in rows]).to_parquet(str(tmp))
    return path


def build_tito_sft_rows(ctx: StageContext, round_id: str, n_episodes: int, results_path: Path, results: list,
                        expected: int, tokenizer: Any) -> StageResult:
    from env0_posttrain.sft import ConversionError, build_tito_rows, validate_rows, write_tito_jsonl

    spec = ctx.spec
    out = ctx.artifacts("sft")
    tokenizer = student_template(ctx, tokenizer)
    drift = drift_gate(spec, results_path, tokenizer)
    try:
        rows, report = build_tito_rows(results_path, spec.sft, tokenizer=tokenizer,
                                       max_seq_length=spec.lora.max_seq_length)
    except ConversionError as err:
        return StageResult(
            metadata={"source_round": round_id, "format": "tito", "error": str(err), "expected_episodes": expected},
            data_version=content_hash("failed", str(err)),
            checks=[CheckOutcome("rows_valid", False, str(err)), CheckOutcome("expected_row_count", False, str(err)),
                    drift],
        )
    tito_path = out / "tito.jsonl"
    write_tito_jsonl(rows, tito_path)
    parquet = write_tito_parquet(rows, out / "tito.parquet")
    validation = validate_rows([r.model_dump(mode="json") for r in rows], source=str(tito_path))
    stored = [training_row(r) for r in rows]
    rewards = {r.episode_key: r.reward for r in results}
    ctx.store.replace_sft_rows(ctx.run_id, [(r.source.task_id, rewards.get(r.source.episode_key), t)
                                            for r, t in zip(rows, stored)], round_id)
    skipped = dict(report.skipped)
    kept = report.curation.n_kept_episodes
    overlength = skipped.get("overlength", 0)
    count_ok = kept + overlength >= expected and overlength <= MAX_OVERLENGTH_FRACTION * max(expected, 1)
    origins: dict[str, int] = {}
    for r in rows:
        origins[r.origin] = origins.get(r.origin, 0) + 1
    return StageResult(
        metadata={
            "source_round": round_id, "format": "tito", "tito_source": spec.sft.tito_source,
            "upweight_mode": spec.sft.upweight_mode, "teacher_episodes": n_episodes, "kept_episodes": kept,
            "expected_episodes": expected, "rows": len(rows), "rows_by_origin": origins,
            "upweight_copies": report.curation.n_upweight_copies,
            "weighted_rows": sum(r.weight != 1.0 for r in rows), "turns_dropped_overlength": report.curation.n_overlength,
            "train_tokens": sum(len(r.output_ids) for r in rows), "skipped": skipped,
            "results_jsonl": results_path, "tito_jsonl": tito_path, "tito_parquet": parquet,
        },
        data_version=content_hash(stored),
        checks=[
            CheckOutcome("rows_valid", validation.ok, validation.summary(), validation.to_dict()),
            CheckOutcome("expected_row_count", count_ok,
                         f"kept {kept} of {expected} expected episodes; {overlength} dropped as longer than "
                         f"max_seq_length {spec.lora.max_seq_length}", {"overlength": overlength}),
            drift,
        ],
        markdown={"skipped": records_table([{"reason": k, "rows": v} for k, v in skipped.items()])},
    )
