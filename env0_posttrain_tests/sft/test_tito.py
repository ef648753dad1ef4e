"""TITO rows (native and re-tokenised) and the drift check against captured token ids."""

from __future__ import annotations

import pytest

from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft import (
    ConversionError,
    TitoRow,
    build_tito_rows,
    drift_check,
    results_row,
    validate_file,
    write_results_jsonl,
    write_tito_jsonl,
)
from env0_posttrain_tests.sft.test_support import QWEN35_TEMPLATE_PATH, make_episode, make_task, tiny_tokenizer

RAW = SFTDataPolicy(strip_think=False)


def _row(i=0, **kw):
    return results_row(make_episode(i, **kw), make_task(i))


def test_native_rows_are_the_captured_ids_per_assistant_turn():
    tok = tiny_tokenizer()
    row = _row(0, think=False, tokenizer=tok)
    rows, report = build_tito_rows([row], RAW)
    assert [r.turn for r in rows] == [0, 1, 2] and {r.origin for r in rows} == {"native"}
    for r, ex in zip(rows, row.trajectory):
        assert r.input_ids == ex.prompt_token_ids and r.output_ids == ex.completion_token_ids
    assert tok.decode(rows[1].output_ids).endswith("</tool_call><|im_end|>")
    assert tok.decode(rows[0].input_ids).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert report.curation.n_kept_episodes == 1 and report.n_output_rows == 3


def test_retokenised_rows_match_native_ids_when_the_template_is_the_same():
    tok = tiny_tokenizer()
    row = _row(0, think=False, tokenizer=tok)
    native, _ = build_tito_rows([row], RAW)
    retok, _ = build_tito_rows([row], RAW.model_copy(update={"tito_source": "retokenise"}), tokenizer=tok)
    assert {r.origin for r in retok} == {"retokenised"}
    assert [(r.input_ids, r.output_ids) for r in retok] == [(r.input_ids, r.output_ids) for r in native]
    without_ids, _ = build_tito_rows([_row(0, think=False)], RAW, tokenizer=tok)  # auto falls back
    assert [(r.input_ids, r.output_ids, r.origin) for r in without_ids] == [
        (r.input_ids, r.output_ids, "retokenised") for r in native]


def test_shaping_the_conversation_makes_native_ids_unusable():
    tok = tiny_tokenizer()
    row = _row(0, think=True, tokenizer=tok)  # think spans are stripped by the default policy
    rows, _ = build_tito_rows([row], SFTDataPolicy(), tokenizer=tok)
    assert {r.origin for r in rows} == {"retokenised"}
    assert all("<think>Find" not in tok.decode(r.output_ids) for r in rows)
    with pytest.raises(ConversionError, match="0 rows") as err:
        build_tito_rows([row], SFTDataPolicy(tito_source="native"), tokenizer=tok)
    assert err.value.report.skipped == {"native_ids_do_not_match_policy": 1}
    with pytest.raises(ConversionError) as err:
        build_tito_rows([_row(1, think=False)], RAW)
    assert err.value.report.skipped == {"no_tokenizer_for_retokenising": 1}


@pytest.mark.parametrize("mode", ["weight", "repeat"])
def test_first_turn_upweighting_by_weight_or_repetition(mode):
    tok = tiny_tokenizer()
    policy = RAW.model_copy(update={"first_turn_weight": 12, "upweight_mode": mode})
    rows, report = build_tito_rows([_row(0, think=False, tokenizer=tok)], policy)
    if mode == "weight":
        assert [(r.turn, r.weight) for r in rows] == [(0, 12.0), (1, 1.0), (2, 1.0)]
    else:
        assert [r.turn for r in rows].count(0) == 12 and len(rows) == 14
        assert {r.weight for r in rows} == {1.0} and report.curation.n_upweight_copies == 11


def test_ids_and_mask_and_labels_forms():
    r = TitoRow(input_ids=[5, 6, 7], output_ids=[8, 9], turn=0, origin="native",
                source={"run_id": "r", "arm": "teacher", "task_id": "t", "trial": 0, "example_id": "t",
                        "episode_key": "k"})
    assert r.ids_and_mask() == {"input_ids": [5, 6, 7, 8, 9], "completion_mask": [0, 0, 0, 1, 1]}
    assert r.labels() == [-100, -100, -100, 8, 9]


def test_overlength_turns_are_dropped_and_counted():
    tok = tiny_tokenizer()
    row = _row(0, think=False, tokenizer=tok)
    lengths = [len(ex.prompt_token_ids) + len(ex.completion_token_ids) for ex in row.trajectory]
    rows, report = build_tito_rows([row], RAW, max_seq_length=sorted(lengths)[1])
    assert [r.turn for r in rows] == [0, 1] and report.curation.n_overlength == 1


def test_tito_file_is_written_atomically_and_validates(tmp_path):
    tok = tiny_tokenizer()
    rows, _ = build_tito_rows([_row(0, think=False, tokenizer=tok)], RAW)
    path = tmp_path / "tito.jsonl"
    assert write_tito_jsonl(rows, path) == 3
    report = validate_file(path)
    assert report.ok and report.kinds["tito"] == 3


def test_drift_check_reports_every_row_whose_ids_differ(tmp_path):
    tok = tiny_tokenizer()
    think_template = (QWEN35_TEMPLATE_PATH.parent / "qwen3_5_think.jinja").read_text()
    clean = make_episode(0, think=False, tokenizer=tok)
    other_template = make_episode(1, think=False, tokenizer=tok, capture_template=think_template)
    corrupted = make_episode(2, think=False, tokenizer=tok)
    corrupted.exchanges[1].completion_token_ids[3] = (corrupted.exchanges[1].completion_token_ids[3] + 1) % len(tok)
    no_ids = make_episode(3, think=False)
    path = tmp_path / "results.jsonl"
    write_results_jsonl([results_row(e, make_task(i)) for i, e in enumerate([clean, other_template, corrupted,
                                                                           no_ids])], path)
    report = drift_check(path, tok)
    assert report.n_rows == 4 and report.n_exchanges_checked == 9 and report.n_exchanges_without_ids == 3
    assert report.drifted_rows == [2, 3]
    assert {(d.exchange, d.part) for d in report.drifts if d.row == 2} >= {(0, "input"), (1, "input"), (2, "input")}
    [bad] = [d for d in report.drifts if d.row == 3]
    assert (bad.exchange, bad.part, bad.first_diff) == (1, "output", 3)
    assert "row 3 (run-a/teacher/mail-reply-002/0) exchange 1 output: ids differ from position 3" in str(report)
    assert drift_check([results_row(clean, make_task(0))], tok).ok
