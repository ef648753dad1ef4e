"""One step and token budget for every arm by default; the report states what each arm ran under."""

from __future__ import annotations

from env0_posttrain.stages.arms import rollout_settings, teacher_endpoint
from env0_posttrain.spec.runspec import parse_spec


def _limits(spec) -> dict[str, tuple[int, int]]:
    out = {}
    for arm in ("teacher", "teacher_eval", "base", "sft"):
        steps = rollout_settings(spec, arm).max_steps
        tokens = teacher_endpoint(spec).max_tokens if arm.startswith("teacher") else spec.eval_limits()[1]
        out[arm] = (steps, tokens)
    return out


def test_every_arm_runs_under_the_one_default_budget():
    spec = parse_spec({"run_id": "r"})
    assert set(_limits(spec).values()) == {(30, 512)}
    assert spec.budget_line().startswith("one budget for every arm")


def test_the_budget_moves_every_arm_and_an_arm_setting_overrides_it():
    spec = parse_spec({"run_id": "r", "budget": {"max_steps": 7, "max_tokens": 64}})
    assert set(_limits(spec).values()) == {(7, 64)}
    spec = parse_spec({"run_id": "r", "budget": {"max_steps": 7, "max_tokens": 64}, "eval": {"max_steps": 3}})
    assert _limits(spec)["base"] == (3, 64) and _limits(spec)["teacher"] == (7, 64)
    assert spec.budget_line() == ("budgets differ by arm: teacher, teacher_eval: 7 steps x 64 tokens; "
                                  "base, sft: 3 steps x 64 tokens")


def test_a_written_spec_keeps_arm_limits_unset_so_editing_its_budget_still_acts():
    written = parse_spec({"run_id": "r"}).model_dump(mode="json")
    assert written["eval"]["max_steps"] is None and written["teacher"]["sampling"]["max_tokens"] is None
    written["budget"]["max_steps"] = 9
    assert set(_limits(parse_spec(written)).values()) == {(9, 512)}
