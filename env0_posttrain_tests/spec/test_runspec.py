"""The run spec refuses bad input with errors that name the field, and round-trips through YAML."""

import math
from pathlib import Path

import annotated_types
import pytest
import yaml
from pydantic import BaseModel

from env0_posttrain.spec.runspec import RunSpec, SpecError, is_valid_run_id, load_spec, parse_spec, write_spec


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
    for name in (".", "..", ".hidden", "-x", "_x", "a/b", "x" * 129):  # a file and a folder name under the data dir
        assert not is_valid_run_id(name), name
    assert is_valid_run_id("x" * 128) and is_valid_run_id("0.5")


def _numbers(model: type[BaseModel], prefix: str = ""):
    """(dotted field, FieldInfo) of every int or float field of a spec section, sections and suites walked."""
    for name, field in model.model_fields.items():
        args = getattr(field.annotation, "__args__", None) or (field.annotation,)
        for a in args:
            inner = getattr(a, "__args__", None) if getattr(a, "__origin__", None) is list else (a,)
            for t in inner or ():
                if isinstance(t, type) and issubclass(t, BaseModel):
                    yield from _numbers(t, f"{prefix}{name}.")
        if any(a in (int, float) for a in args):
            yield prefix + name, field


def test_every_number_in_the_spec_has_a_range():
    """A new numeric field must say its range: the spec refuses what no run can use before anything runs."""
    unbounded = [name for name, f in _numbers(RunSpec)
                 if not any(isinstance(m, (annotated_types.Ge, annotated_types.Gt)) for m in f.metadata)
                 or not any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in f.metadata)]
    assert unbounded == []
    assert len(list(_numbers(RunSpec))) > 50  # the walk reached the sections, the suites and the shell


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_no_float_field_takes_inf_or_nan(value):
    floats = [name for name, f in _numbers(RunSpec) if float in (getattr(f.annotation, "__args__", None)
                                                                  or (f.annotation,))]
    assert "lora.learning_rate" in floats and "shell.timeout_s" in floats
    for name in floats:
        data: dict = {"run_id": "r"}
        *parents, last = name.split(".")
        node = data
        for part in parents:
            node = node.setdefault(part, {}) if part != "suites" else node.setdefault(part, [{}])[0]
        if parents and parents[0] == "suites":
            node.update({"name": "s", "kind": "generated", "sample": 1})
        node[last] = value
        with pytest.raises(SpecError, match=f"{name.replace('suites.', 'suites.0.')}: Input should be a finite number"):
            parse_spec(data, "x.yaml")


def test_one_bad_field_is_one_line_and_several_are_one_line_each():
    with pytest.raises(SpecError) as one:
        parse_spec({"run_id": "r", "lora": {"max_steps": 10**23}}, "x.yaml")
    assert str(one.value) == "x.yaml: invalid run spec: lora.max_steps: Input should be less than or equal to 1000000"
    with pytest.raises(SpecError) as two:
        parse_spec({"run_id": "r", "lora": {"max_steps": 0, "r": 0}}, "x.yaml")
    assert str(two.value).splitlines()[0] == "x.yaml: invalid run spec"
    assert [ln.split(":")[0] for ln in str(two.value).splitlines()[1:]] == ["  - lora.r", "  - lora.max_steps"]
