"""The tiny student's tokenizer, template and cache."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from env0_posttrain.train.synthetic_rows import TOOLS, make_synthetic_set
from env0_posttrain.train.tiny_student.build import (
    MARKER_FILE,
    pretrain_blocks,
    TinyStudentConfig,
    ensure_tiny_student,
    student_info,
)
from env0_posttrain.train.tiny_student.tokenizer import (
    build_tokenizer,
    check_round_trip,
    qwen3_5_chat_template,
)

MICRO = TinyStudentConfig(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                          vocab_size=300, pretrain_steps=2, pretrain_batch_size=2, pretrain_seq_len=64)


@pytest.fixture(scope="module")
def data():
    return make_synthetic_set(24, 8, seed=1)


def test_template_is_trls_qwen3_5_byte_for_byte(data):
    import trl
    from trl.chat_template_utils import get_training_chat_template

    tok = build_tokenizer(["hello world"] * 5, data.entities, 300)
    packaged = (Path(trl.__file__).parent / "chat_templates" / "qwen3_5_nothink.jinja").read_bytes()
    assert tok.chat_template.encode() == packaged == qwen3_5_chat_template().encode()
    # TRL recognises it: the training twin with generation markers is available
    assert "{%- generation %}" in get_training_chat_template(tok)


def test_entities_are_whole_tokens_and_text_round_trips(data):
    tok = build_tokenizer([str(r) for r in data.train], data.entities, 400)
    for entity in ["ana.ito@acme.test", "gmail_messages_send", "body_text", "<parameter=", json.dumps(TOOLS[0])]:
        assert len(tok(entity, add_special_tokens=False)["input_ids"]) == 1, entity
    text = tok.apply_chat_template(data.train[0]["messages"], tools=data.train[0]["tools"], tokenize=False)
    check_round_trip(tok, text)
    assert tok.eos_token == "<|im_end|>" and tok.pad_token != tok.eos_token


def test_parse_response_reads_back_a_rendered_tool_call(data):
    from trl.chat_template_utils import add_response_schema

    tok = add_response_schema(build_tokenizer(["x y z"] * 3, data.entities, 300))
    row = data.train[0]
    call = row["messages"][2]["tool_calls"][0]["function"]
    full = tok.apply_chat_template(row["messages"][:3], tools=row["tools"], tokenize=False)
    prompt = tok.apply_chat_template(row["messages"][:2], tools=row["tools"], tokenize=False, add_generation_prompt=True)
    parsed = tok.parse_response(full[len(prompt):], prefix=prompt)
    got = parsed["tool_calls"][0]["function"]
    assert got["name"] == call["name"]
    assert set(got["arguments"]) == set(call["arguments"])


def test_student_is_built_once_and_reloads(tmp_path, data):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = ensure_tiny_student(tmp_path, data.corpus, data.entities, MICRO)
    marker = path / "tiny_student.json"
    stamp = marker.stat().st_mtime_ns
    assert ensure_tiny_student(tmp_path, data.corpus, data.entities, MICRO) == path
    assert marker.stat().st_mtime_ns == stamp
    model = AutoModelForCausalLM.from_pretrained(path)
    tok = AutoTokenizer.from_pretrained(path)
    assert model.config.model_type == "qwen3" and model.config.vocab_size == len(tok)
    assert tok.chat_template == qwen3_5_chat_template()
    info = student_info(path)
    assert info["pretrain_loss_last"] < info["pretrain_loss_first"] + 1.0
    # a different config is a different student
    other = ensure_tiny_student(tmp_path, data.corpus, data.entities, MICRO.model_copy(update={"seed": 7}))
    assert other != path
    assert not list(tmp_path.glob(".tiny-*.*[!k]"))  # no temporary build directories left behind


def test_concurrent_callers_share_one_build(tmp_path, data):
    cfg = MICRO.model_copy(update={"pretrain_steps": 0})
    out: list[Path] = []
    threads = [threading.Thread(target=lambda: out.append(ensure_tiny_student(tmp_path, data.corpus, data.entities, cfg)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 1 and len(out) == 3
    assert len([p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]) == 1


def test_hybrid_qwen3_5_text_student_builds(tmp_path, data):
    from transformers import AutoModelForCausalLM

    cfg = MICRO.model_copy(update={"architecture": "qwen3_5_text", "num_layers": 2, "pretrain_steps": 1})
    model = AutoModelForCausalLM.from_pretrained(ensure_tiny_student(tmp_path, data.corpus, data.entities, cfg))
    assert model.config.model_type == "qwen3_5_text"
    assert model.config.layer_types == ["linear_attention", "full_attention"]


def test_empty_corpus_is_refused(tmp_path):
    with pytest.raises(ValueError, match="corpus is empty"):
        ensure_tiny_student(tmp_path, [], [], MICRO)


def test_pretrain_blocks_remix_the_documents_on_every_pass():
    docs = [[i] * (i % 5 + 1) for i in range(1, 40)]  # 39 documents of 1-5 tokens, token = document id
    blocks = pretrain_blocks(docs, n_blocks=60, block_len=16, separator=0, seed=1)
    assert len(blocks) == 60 and all(len(b) == 16 for b in blocks)
    flat = [t for b in blocks for t in b]
    one_pass = sum(len(d) + 1 for d in docs)  # every document, with its separator
    assert sorted(flat[:one_pass]) == sorted([0] * len(docs) + [t for d in docs for t in d])
    order = lambda seq: [t for i, t in enumerate(seq) if t and (i == 0 or seq[i - 1] != t)]  # noqa: E731
    assert order(flat[:one_pass]) != order(flat[one_pass : 2 * one_pass])  # the second pass is a new mix
    assert pretrain_blocks(docs, 60, 16, 0, seed=1) == blocks and pretrain_blocks(docs, 60, 16, 0, seed=2) != blocks
    assert pretrain_blocks([], 5, 16, 0, seed=1) == []


def test_the_base_model_stage_builds_once_and_later_stages_read_its_record(tmp_path, monkeypatch):
    """base_model builds (cached by corpus and recipe) and records; later stages read the record without
    building, and refuse it for another student section or when its directory is gone."""
    import logging

    import env0_posttrain.train as train
    import env0_posttrain.train.tiny_student.corpus as sc
    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages.base_model import base_student, build_base_model
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.spec.runspec import parse_spec
    from env0_posttrain.store import Store
    from env0_posttrain.tasks import generate_tasks

    calls = {"corpus": 0, "build": 0}

    def corpus(tasks, mix):
        calls["corpus"] += 1
        return [t.instruction for t in tasks], []

    def build(cache_dir, corpus, entities, config, report_to=()):
        calls["build"] += 1
        dest = Path(cache_dir) / f"tiny-qwen3-{config.pretrain_steps:012d}"
        dest.mkdir(parents=True, exist_ok=True)
        (dest / MARKER_FILE).write_text('{"pretrain_steps": %d}' % config.pretrain_steps)
        return dest

    monkeypatch.setattr(sc, "student_corpus", corpus)
    monkeypatch.setattr(train, "ensure_tiny_student", build)
    paths = Paths(tmp_path)
    store = Store(tmp_path / "env0.duckdb")
    spec = parse_spec({"run_id": "r1", "student": {"pretrain_steps": 7}}, "test")
    store.upsert_run(spec)
    store.replace_task_set("r1", "d", {}, [], [("train", t) for t in generate_tasks(0, per_template=1)[:5]])
    with pytest.raises(RuntimeError, match="materialize base_model first"):
        base_student(spec, store, "r1", paths)

    result = build_base_model(StageContext("r1", spec, store, paths, logging.getLogger("t")))
    assert result.metadata["source"] == "tiny" and result.metadata["pretrain_steps"] == 7
    first = base_student(spec, store, "r1", paths)
    assert base_student(spec, store, "r1", paths) == first == result.metadata["path"]
    assert calls == {"corpus": 1, "build": 1}  # reading the record builds nothing
    other = spec.model_copy(update={"student": spec.student.model_copy(update={"pretrain_steps": 8})})
    with pytest.raises(RuntimeError, match="changed since base_model"):
        base_student(other, store, "r1", paths)
    (first / MARKER_FILE).unlink()
    with pytest.raises(RuntimeError, match="is gone"):
        base_student(spec, store, "r1", paths)
    assert base_student(parse_spec({"run_id": "r1", "student": {"model": "org/some-model"}}, "t"), store, "r1",
                        paths) == "org/some-model"  # a hub id needs no build
