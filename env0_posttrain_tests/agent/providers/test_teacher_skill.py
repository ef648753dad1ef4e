"""Offline teachers of different strength: the skill rides in the oracle's model id, also through the
fault wrapper, so teacher backfills can compare strong and weak teachers."""

from __future__ import annotations

import pytest

from env0_posttrain.agent import AgentSettings, ModelEndpoint
from env0_posttrain.agent.providers.oracle import skill_from_model_id
from env0_posttrain.spec.runspec import TeacherSpec
from env0_posttrain_tests.agent.test_rollouts import rollouts

FAST = AgentSettings(max_steps=8, backoff_base_s=0, concurrency=8)


def test_skill_is_read_from_the_model_id():
    assert skill_from_model_id("env0-oracle/oracle@0.6") == 0.6
    assert skill_from_model_id("oracle@1") == 1.0
    assert skill_from_model_id("env0-oracle/oracle") is None
    with pytest.raises(ValueError, match="outside"):
        skill_from_model_id("env0-oracle/oracle@1.5")
    with pytest.raises(ValueError, match="not a number"):
        skill_from_model_id("env0-oracle/oracle@strong")


@pytest.mark.parametrize("model", ["env0-oracle/oracle@0.3", "env0-faulty/env0-oracle/oracle@0.3"])
def test_teacher_endpoint_carries_the_ids_skill_through_the_wrapper(model):
    assert ModelEndpoint.from_teacher(TeacherSpec(model=model, skill=0.9), seed=4).extra == {"env0_skill": 0.3,
                                                                                            "env0_seed": 4}
    plain = ModelEndpoint.from_teacher(TeacherSpec(model=model.removesuffix("@0.3"), skill=0.9), seed=4)
    assert plain.extra == {"env0_skill": 0.9, "env0_seed": 4}


def test_wrapped_weak_oracle_fails_where_wrapped_perfect_one_passes():
    def pass_rate(model: str) -> float:
        sink = []
        ep = ModelEndpoint.from_teacher(TeacherSpec(model=model))
        rollouts(ep.model_copy(update={"extra": ep.extra | {"env0_fault_rate": 0.0}}), FAST, sink=sink)
        return sum(e.passed for e in sink) / len(sink)

    assert pass_rate("env0-faulty/env0-oracle/oracle@1.0") == 1.0
    assert pass_rate("env0-faulty/env0-oracle/oracle@0.0") < 0.5


def test_a_bad_skill_in_the_id_is_refused_when_the_spec_is_read():
    from env0_posttrain.spec.runspec import SpecError, parse_spec

    with pytest.raises(SpecError, match=r"teacher.model: .*'1.2'"):
        parse_spec({"run_id": "x", "teacher": {"model": "env0-faulty/env0-oracle/oracle@1.2"}})
    assert parse_spec({"run_id": "x", "teacher": {"model": "env0-oracle/oracle@0.6"}}).teacher.model.endswith("@0.6")
