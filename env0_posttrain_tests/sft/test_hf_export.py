"""TRL rows as a Hugging Face dataset: the rendered prompt survives datasets, JSONL and parquet unchanged."""

from __future__ import annotations

import datasets
import pytest

from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft import (
    TrlRow,
    convert_file,
    convert_rows,
    export_parquet,
    load_trl_jsonl,
    push_to_hub,
    results_row,
    to_hf_dataset,
    write_results_jsonl,
)
from env0_posttrain.sft.hf_export import load_parquet
from env0_posttrain.sft.tokens import render_ids
from env0_posttrain_tests.sft.test_support import TOOLS, make_episode, make_task, tiny_tokenizer


def _trl_rows(n=3):
    rows, _ = convert_rows([results_row(make_episode(i), make_task(i)) for i in range(n)], SFTDataPolicy(), fmt="trl")
    # Heterogeneous tool sets, as different task families offer: schema merging would add null keys.
    return [r.model_copy(update={"tools": TOOLS[: 1 + i % 3]}) for i, r in enumerate(rows)]


def _rendered(rows, tok):
    return [tok.apply_chat_template(r["messages"] if isinstance(r, dict) else r.messages,
                                    tools=r["tools"] if isinstance(r, dict) else r.tools, tokenize=False)
            for r in rows]


def test_plain_struct_inference_would_change_the_rendered_prompt():
    """The hazard the Json features exist for (FIELD-NOTES): merged schemas inject null keys."""
    rows = _trl_rows()
    naive = datasets.Dataset.from_list([{"messages": r.messages, "tools": r.tools} for r in rows])
    assert naive[0]["tools"][0]["function"]["parameters"].get("required", "absent") is None
    tok = tiny_tokenizer()
    assert _rendered(naive, tok) != _rendered(rows, tok)


def test_to_hf_dataset_keeps_every_row_exactly():
    rows = _trl_rows()
    ds = to_hf_dataset(rows)
    assert set(ds.column_names) == {"messages", "tools", "source"} and len(ds) == 3
    back = [TrlRow.model_validate(r) for r in ds]
    assert back == rows
    tok = tiny_tokenizer()
    assert _rendered(ds, tok) == _rendered(rows, tok)


def test_parquet_export_roundtrips_in_hub_layout(tmp_path):
    rows = _trl_rows()
    path = export_parquet(rows, tmp_path / "hf")
    assert path == tmp_path / "hf" / "data" / "train-00000-of-00001.parquet" and path.exists()
    back = load_parquet(tmp_path / "hf")
    assert [TrlRow.model_validate(r) for r in back] == rows
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_failed_parquet_export_keeps_the_previous_one(tmp_path):
    path = export_parquet(_trl_rows(), tmp_path / "hf")
    before = path.read_bytes()
    with pytest.raises(ValueError):
        export_parquet([{"messages": "not a list", "tools": "[]", "source": "{}"}], tmp_path / "hf")
    assert path.read_bytes() == before


def test_trl_jsonl_reads_back_identically_with_and_without_explicit_features(tmp_path):
    results = tmp_path / "results.jsonl"
    write_results_jsonl([results_row(make_episode(i), make_task(i)) for i in range(3)], results)
    out = tmp_path / "trl.jsonl"
    convert_file(results, out, SFTDataPolicy(), fmt="trl")
    expected, _ = convert_rows(results, SFTDataPolicy(), fmt="trl")
    tok = tiny_tokenizer()
    with_features = [TrlRow.model_validate(r) for r in load_trl_jsonl(out)]
    plain = [TrlRow.from_stored(r) for r in datasets.load_dataset("json", data_files=str(out), split="train")]
    assert with_features == plain == expected
    assert [render_ids(r.messages, r.tools, tok) for r in plain] == [
        render_ids(r.messages, r.tools, tok) for r in expected]


def test_push_to_hub_takes_its_token_only_from_the_environment(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(RuntimeError, match="HF_TOKEN"):
        push_to_hub(_trl_rows(1), "someone/env0-sft")
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    with pytest.raises(ValueError, match="owner/name"):
        push_to_hub(_trl_rows(1), "no-owner")
