"""The run spec refuses bad input with errors that name the field, and round-trips through YAML."""

from pathlib import Path

import pytest
import yaml

from env0_posttrain.runspec import RunSpec, SpecError, is_valid_run_id, load_spec, parse_spec, write_spec


def test_defaults_are_the_seeds_recipe():
    spec = RunSpec(run_id="r1")
    assert (spec.lora.r, spec.lora.alpha, spec.lora.dropout) == (32, 64, 0.05)
    assert spec.lora.target_modules == ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    assert (spec.lora.learning_rate, spec.lora.max_seq_length) == (1e-4, 8192)
    assert (spec.lora.per_device_batch_size, spec.lora.grad_accumulation) == (1, 8)
    assert spec.eval.trials == 3


@pytest.mark.parametrize(
    "data, field",
    [
        ({"run_id": "a,b"}, "run_id"),
        ({"run_id": "a|b"}, "run_id"),
        ({"run_id": "a...b"}, "run_id"),
        ({"run_id": "ok", "lora": {"rank": 8}}, "lora.rank"),
        ({"run_id": "ok", "teacher": {"model": ""}}, "teacher.model"),
        ({"run_id": "ok", "student": {"model": ""}}, "student.model"),
        ({"run_id": "ok", "tasks": {"families": ["mail", "fax"]}}, "tasks.families"),
        ({"run_id": "ok", "hosting": {"kind": "openai_compatible"}}, "hosting"),
        ({"run_id": "ok", "bogus": 1}, "bogus"),
        ({}, "run_id"),
    ],
)
def test_bad_specs_name_the_field(data, field):
    with pytest.raises(SpecError) as err:
        parse_spec(data, "spec.yaml")
    assert "spec.yaml" in str(err.value)
    assert field in str(err.value)


def test_yaml_round_trip_and_file_name_must_match(tmp_path: Path):
    spec = parse_spec({"run_id": "exp-1.a_b", "lora": {"r": 8}}, "x")
    path = write_spec(spec, tmp_path)
    assert load_spec(path) == spec
    other = tmp_path / "other.yaml"
    other.write_text(path.read_text())
    with pytest.raises(SpecError, match="does not match the file name"):
        load_spec(other)


def test_broken_yaml_is_refused_with_the_file_name(tmp_path: Path):
    p = tmp_path / "bad.yaml"
    p.write_text("run_id: [unclosed\n")
    with pytest.raises(SpecError, match="bad.yaml"):
        load_spec(p)
    p.write_text(yaml.safe_dump(["not", "a", "mapping"]))
    with pytest.raises(SpecError, match="mapping"):
        load_spec(p)


def test_run_id_rule():
    assert is_valid_run_id("nightly-2026.11_22")
    assert not is_valid_run_id("a b") and not is_valid_run_id("x...y") and not is_valid_run_id("")
