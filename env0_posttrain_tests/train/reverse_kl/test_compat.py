"""A teacher that reads token ids differently from the student is refused, naming both models and what differs."""

from __future__ import annotations

import copy

import pytest

from env0_posttrain.train.reverse_kl.compat import TeacherMismatch, check_teacher_compatible, compatibility_problems
from env0_posttrain_tests.support.agent import build_tiny_student


@pytest.fixture(scope="module")
def student_tok(tmp_path_factory):
    from transformers import AutoTokenizer

    path = tmp_path_factory.mktemp("compat-student")
    build_tiny_student(path)
    return AutoTokenizer.from_pretrained(str(path))


def test_the_same_tokenizer_saved_and_reloaded_is_compatible(student_tok, tmp_path):
    from transformers import AutoTokenizer

    student_tok.save_pretrained(tmp_path / "teacher")
    check_teacher_compatible(student_tok, AutoTokenizer.from_pretrained(str(tmp_path / "teacher")))
    assert compatibility_problems(student_tok, student_tok) == []


def test_another_chat_template_is_refused_naming_both_models(student_tok):
    teacher = copy.deepcopy(student_tok)
    teacher.chat_template = student_tok.chat_template.replace("<|im_start|>assistant", "<|im_start|>assistant ", 1)
    with pytest.raises(TeacherMismatch) as err:
        check_teacher_compatible(student_tok, teacher, "students/tiny", "teachers/big")
    msg = str(err.value)
    assert "'teachers/big'" in msg and "'students/tiny'" in msg and "chat template differs" in msg
    assert "vocabulary" not in msg


def test_another_vocabulary_and_special_tokens_are_refused(student_tok):
    teacher = copy.deepcopy(student_tok)
    teacher.add_tokens(["<extra_teacher_token>"])
    teacher.add_special_tokens({"additional_special_tokens": ["<|teacher_only|>"]})
    problems = compatibility_problems(student_tok, teacher)
    assert any("vocabulary differs" in p and "2 tokens only the teacher has" in p for p in problems)
    assert any(p.startswith("special token all differs") for p in problems)
    no_template = copy.deepcopy(student_tok)
    no_template.chat_template = None
    assert compatibility_problems(student_tok, no_template) == ["chat template missing in the teacher"]
