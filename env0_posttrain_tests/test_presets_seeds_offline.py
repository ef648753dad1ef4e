"""The seeds-offline preset acts through the shell surface on every arm; the demo keeps its own recipe."""

from env0_posttrain.cli.presets import preset_data
from env0_posttrain.spec.runspec import RunSpec


def _spec(name: str, tmp_path) -> RunSpec:
    data = preset_data(name, "r")
    if name == "seeds-offline":
        data["env0"] = {"root": str(tmp_path)}
    return RunSpec.model_validate(data)


def test_seeds_offline_teacher_and_student_arms_share_the_shell_surface(tmp_path):
    spec = _spec("seeds-offline", tmp_path)
    assert spec.teacher.surface == spec.eval.surface == "shell"
    assert not spec.compare_across_surfaces
    steps, tokens = spec.eval_limits()
    assert steps >= 2 and tokens >= 900  # one script of up to ~850 tiny-tokenizer tokens, then finish
    assert spec.lora.max_seq_length >= 2845  # the longest shell row of tasks-train-mini is kept, not dropped
    assert spec.lora.modules_to_save == ["lm_head"]  # the output head learns the script tokens
    assert spec.eval.repetition_window == 256  # the base's looping replies end long before max_tokens


def test_the_demo_recipe_is_not_the_seeds_offline_one(tmp_path):
    from env0_posttrain.train import TINY_DEMO_LORA

    demo = _spec("demo", tmp_path)
    assert demo.teacher.surface == demo.eval.surface == "tools"
    assert {k: getattr(demo.lora, k) for k in TINY_DEMO_LORA} == TINY_DEMO_LORA
    assert demo.eval.max_tokens == 96 and demo.eval.max_steps == 4 and demo.lora.modules_to_save == []
