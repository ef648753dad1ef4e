"""The student's tokenizer comes from the student; the tiny model is built only when it is the student."""

from __future__ import annotations

import pytest

from env0_posttrain.stages import arms as models
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec
from env0_posttrain_tests.sft.test_support import tiny_tokenizer

HOSTED = {"kind": "openai_compatible", "api_base": "http://127.0.0.1:9/v1"}


@pytest.fixture
def tok_dir(tmp_path):
    path = tmp_path / "student-tokenizer"
    tiny_tokenizer().save_pretrained(path)
    return path


@pytest.fixture
def built(monkeypatch, tmp_path):
    """Records every use of the tiny student (the base_model record); the build itself is replaced by the saved tokenizer dir."""
    calls: list[str] = []

    def fake_build(spec, store, run_id, paths):
        calls.append(spec.student.model)
        return tmp_path / "student-tokenizer"

    monkeypatch.setattr(models, "base_student", fake_build)
    return calls


def _load(data: dict, tmp_path):
    spec = parse_spec({"run_id": "r", **data})
    return models.load_student_tokenizer(spec, None, "r", Paths.from_env(tmp_path / "data"))


def test_a_hosted_student_with_a_declared_tokenizer_builds_no_tiny_model(tok_dir, built, tmp_path):
    tok = _load({"hosting": {**HOSTED, "base_model_name": "Qwen/Qwen3.5-9B"},
                 "student": {"tokenizer": str(tok_dir)}}, tmp_path)
    assert built == [] and tok.convert_tokens_to_ids("<|im_end|>") == tiny_tokenizer().convert_tokens_to_ids("<|im_end|>")
    assert tok.name_or_path == str(tok_dir)


def test_a_hosted_student_takes_the_tokenizer_of_its_served_base_name(tok_dir, built, tmp_path):
    tok = _load({"hosting": {**HOSTED, "base_model_name": str(tok_dir)}}, tmp_path)
    assert built == [] and tok.name_or_path == str(tok_dir)


def test_a_path_student_is_its_own_tokenizer_source(tok_dir, built, tmp_path):
    tok = _load({"student": {"model": str(tok_dir)}}, tmp_path)
    assert built == [] and tok.name_or_path == str(tok_dir)


def test_the_tiny_model_is_built_only_when_the_tiny_student_is_the_student(tok_dir, built, tmp_path):
    _load({"student": {"model": "tiny-qwen3"}}, tmp_path)
    assert built == ["tiny-qwen3"]


def test_a_hosted_student_without_a_tokenizer_source_is_refused_before_any_build(built, tmp_path):
    with pytest.raises(ValueError, match="student.tokenizer"):
        _load({"hosting": HOSTED}, tmp_path)
    assert built == []


def test_a_tokenizer_that_does_not_load_names_the_settings(built, tmp_path):
    with pytest.raises(RuntimeError, match=r"student.tokenizer / student.model"):
        _load({"student": {"tokenizer": str(tmp_path / "missing")}}, tmp_path)
