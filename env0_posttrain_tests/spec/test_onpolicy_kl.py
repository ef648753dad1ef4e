"""The `reverse_kl` settings: strict, finite, and a teacher that names where it is."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from env0_posttrain.spec.onpolicy_kl import ReverseKLSpec, TinyTeacherSpec


def test_defaults_are_the_offline_tiny_teacher_and_pure_kl():
    spec = ReverseKLSpec()
    assert (spec.kind, spec.teacher, spec.reward_weight, spec.report_to) == ("reverse_kl", "tiny", 0.0, ["tensorboard"])
    assert spec.tiny_teacher.hidden_size > 192  # larger than the tiny student's default


@pytest.mark.parametrize(("fields", "message"), [
    ({"teacher": "local"}, "reverse_kl.teacher_path is required"),
    ({"teacher": "server", "server_url": "http://h:8000/v1"}, "reverse_kl.server_model, reverse_kl.teacher_path"),
    ({"kl_coef": 0.0}, "nothing to train on"),
    ({"kl_coef": float("nan")}, "finite number"),
    ({"kind": "relabel"}, "kind"),
    ({"learnig_rate": 1e-3}, "learnig_rate"),
    ({"tiny_teacher": {"hidden_size": 100, "num_heads": 8}}, "multiple of num_heads"),
])
def test_bad_settings_are_refused_naming_the_field(fields, message):
    with pytest.raises(ValidationError, match=message):
        ReverseKLSpec.model_validate(fields)


def test_a_server_teacher_needs_its_tokenizer_and_a_frozen_spec_cannot_change():
    spec = ReverseKLSpec(teacher="server", server_url="http://h:8000/v1", server_model="m", teacher_path="org/m")
    assert spec.server_mode == "prompt_logprobs"
    with pytest.raises(ValidationError):
        spec.steps = 3  # type: ignore[misc]
    assert TinyTeacherSpec(hidden_size=64, num_heads=4, num_kv_heads=2).hidden_size == 64
