"""Presets are files (spec/presets/<name>.yaml): each makes a valid spec, `extends` and `${VAR}` read as their
comments say, and the files ship in the wheel. The seeds-offline preset acts through the shell surface on every
arm; the demo keeps its own recipe."""

import tomllib

import pytest

from env0_posttrain.making.presets import PRESETS, preset_data
from env0_posttrain.spec.runspec import RunSpec, parse_spec
from env0_posttrain_tests.support.paths import REPO as ROOT

FOLDER = ROOT / "env0_posttrain" / "spec" / "presets"


def _spec(name: str, tmp_path) -> RunSpec:
    data = preset_data(name, "r")
    if name.startswith("seeds"):
        data["env0"] = {"root": str(tmp_path)}
    return RunSpec.model_validate(data)


def test_every_preset_file_is_a_preset_and_makes_a_valid_spec(tmp_path):
    assert set(PRESETS) == {p.stem for p in FOLDER.glob("*.yaml")} >= {"default", "demo", "demo-rl", "seeds",
                                                                        "seeds-offline"}
    for name in PRESETS:
        assert _spec(name, tmp_path).run_id == "r"
    assert parse_spec(preset_data("default", "r")) == parse_spec({"run_id": "r"})  # defaults live in runspec.py
    with pytest.raises(KeyError, match="unknown preset 'nope'"):
        preset_data("nope", "r")


def test_the_demo_plays_the_one_call_starter_templates():
    from env0_posttrain.tasks import starter_template_ids

    assert preset_data("demo", "r")["tasks"]["templates"] == starter_template_ids(max_calls=1)


def test_a_preset_reads_the_environment_when_the_spec_is_made(monkeypatch, tmp_path):
    monkeypatch.setenv("ENV0_ROOT", str(tmp_path))
    assert preset_data("seeds", "r")["env0"] == {"root": str(tmp_path)}
    assert preset_data("seeds-offline", "r")["env0"] == {"root": str(tmp_path)}  # through extends
    monkeypatch.delenv("ENV0_ROOT")
    assert preset_data("seeds", "r")["env0"] == {"root": None}


def test_preset_files_ship_in_the_wheel():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["env0_posttrain"]
    package = ROOT / "env0_posttrain"
    for path in FOLDER.glob("*.yaml"):
        assert any(path.relative_to(package).match(g.removeprefix("**/")) for g in globs), path


def test_seeds_offline_teacher_and_student_arms_share_the_shell_surface(tmp_path):
    spec = _spec("seeds-offline", tmp_path)
    assert spec.teacher.surface == spec.eval.surface == "shell"
    assert not spec.compare_across_surfaces
    steps, tokens = spec.eval_limits()
    assert steps >= 2 and tokens >= 900  # one script of up to ~850 tiny-tokenizer tokens, then finish
    assert spec.lora.max_seq_length >= 2845  # the longest shell row of tasks-train-mini is kept, not dropped
    assert spec.lora.modules_to_save == ["lm_head"]  # the output head learns the script tokens
    assert spec.eval.repetition_window == 256  # the base's looping replies end long before max_tokens
    assert spec.tasks == _spec("seeds", tmp_path).tasks and spec.suites == _spec("seeds", tmp_path).suites


def test_the_demo_recipe_is_not_the_seeds_offline_one(tmp_path):
    demo = _spec("demo", tmp_path)
    assert demo.teacher.surface == demo.eval.surface == "tools"
    lora = preset_data("demo", "r")["lora"]
    assert {k: getattr(demo.lora, k) for k in lora} == lora and demo.lora.max_seq_length == 512
    assert demo.eval.max_tokens == 96 and demo.eval.max_steps == 4 and demo.lora.modules_to_save == []
    assert _spec("seeds-offline", tmp_path).lora.max_seq_length == 4096
