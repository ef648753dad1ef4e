"""The on-policy stage's spec section (a union by kind: relabel and reverse_kl), its recorded skips, its
per-round task draw, and the demo-onpolicy preset."""

from __future__ import annotations

import logging

import pytest

from env0_posttrain.spec.onpolicy import RelabelSpec, ReverseKLSpec
from env0_posttrain.spec.onpolicy_kl import ReverseKLSpec as ReverseKLSettings
from env0_posttrain.spec.runspec import SpecError, parse_spec
from env0_posttrain.stages.onpolicy_adapter import (
    ROUND_STEPS,
    draw_fresh_tasks,
    evaluate_onpolicy,
    onpolicy_training_key,
    round_tasks,
    train_onpolicy_adapter,
)
from env0_posttrain_tests.support.agent import notes_task


def test_the_section_is_optional_and_a_union_by_kind():
    assert parse_spec({"run_id": "x"}).onpolicy is None
    relabel = parse_spec({"run_id": "x", "onpolicy": {"rounds": 3}}).onpolicy  # no kind: relabel
    assert isinstance(relabel, RelabelSpec) and relabel.kind == "relabel" and relabel.rounds == 3
    again = parse_spec(parse_spec({"run_id": "x", "onpolicy": {"kind": "relabel"}}).model_dump(mode="json"))
    assert again.onpolicy.kind == "relabel"
    rkl = parse_spec({"run_id": "x", "onpolicy": {"kind": "reverse_kl", "steps_per_round": 4}}).onpolicy
    assert isinstance(rkl, ReverseKLSpec) and rkl.teacher == "tiny" and rkl.temperature == 1.0
    assert rkl.steps == 4  # the core's steps mirror steps_per_round
    assert isinstance(rkl, ReverseKLSettings)  # what train_reverse_kl takes
    assert parse_spec(parse_spec({"run_id": "x", "onpolicy": rkl.model_dump(mode="json")}).model_dump(mode="json")
                      ).onpolicy == rkl
    assert set(ROUND_STEPS) == {"relabel", "reverse_kl"}  # one training step per kind that is built


@pytest.mark.parametrize("section, match", [
    ({"kind": "reverse_kl", "temperature": 0.7}, "onpolicy.reverse_kl.*temperature is 0.7.*temperature 1"),
    ({"kind": "reverse_kl", "steps": 5}, r"onpolicy.reverse_kl.*steps \(5\).*steps_per_round \(50\)"),
    ({"kind": "reverse_kl", "teacher": "server", "server_url": "http://h:8000/v1"}, "server_model.*required"),
    ({"kind": "dpo"}, "onpolicy.*'dpo'"),
    ({"kind": "relabel", "round": 2}, r"onpolicy.relabel.round\b.*did you mean `onpolicy.relabel.rounds`|onpolicy.relabel.round"),
    ({"kind": "relabel", "rounds": 0}, "onpolicy.relabel.rounds"),
])
def test_bad_sections_are_refused_naming_the_field(section, match):
    with pytest.raises(SpecError, match=match):
        parse_spec({"run_id": "x", "onpolicy": section})


def test_runs_without_an_onpolicy_section_skip_both_stages(tmp_path):
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.store import Store
    from env0_posttrain.util.paths import Paths

    paths = Paths(tmp_path)
    ctx = StageContext("no-op", parse_spec({"run_id": "no-op"}), Store(paths.db), paths, logging.getLogger("t"))
    for stage in (train_onpolicy_adapter, evaluate_onpolicy):
        res = stage(ctx)
        assert res.metadata["skipped"] is True and all(c.passed is None for c in res.checks)
    assert ctx.store.latest_training(onpolicy_training_key("no-op")) is None
    assert ctx.store.latest_round("no-op", "onpolicy") is None
    with_op = StageContext("op", parse_spec({"run_id": "op", "onpolicy": {}}), Store(paths.db), paths,
                           logging.getLogger("t"))
    with pytest.raises(RuntimeError, match="materialize lora_adapter first"):
        train_onpolicy_adapter(with_op)


def test_fresh_tasks_are_refused_for_a_corpus_and_drawn_past_the_runs_stored_tasks(tmp_path):
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.store import Store
    from env0_posttrain.tasks import make_task_set
    from env0_posttrain.util.paths import Paths

    with pytest.raises(SpecError, match=r"onpolicy.fresh_tasks \(5\).*tasks.source imports a fixed list"):
        parse_spec({"run_id": "x", "tasks": {"source": "/corpus"}, "onpolicy": {"fresh_tasks": 5}})
    with pytest.raises(SpecError, match="onpolicy.relabel.fresh_tasks"):
        parse_spec({"run_id": "x", "onpolicy": {"fresh_tasks": -1}})
    with pytest.raises(SpecError, match=r"onpolicy.entity_swaps \(2\) works on the generated company's entities"):
        parse_spec({"run_id": "x", "tasks": {"source": "/corpus"}, "onpolicy": {"entity_swaps": 2}})
    with pytest.raises(SpecError, match=r"onpolicy.entity_weight \(4.0\) works on the generated company's entities"):
        parse_spec({"run_id": "x", "tasks": {"source": "/corpus"}, "onpolicy": {"entity_weight": 4}})
    with pytest.raises(SpecError, match="onpolicy.relabel.entity_swaps"):
        parse_spec({"run_id": "x", "onpolicy": {"entity_swaps": 65}})
    spec = parse_spec({"run_id": "fr", "tasks": {"families": ["mail", "auth"], "n_train": 10, "n_eval": 4, "seed": 5},
                       "onpolicy": {"fresh_tasks": 12}})
    paths = Paths(tmp_path)
    ctx = StageContext("fr", spec, Store(paths.db), paths, logging.getLogger("t"))
    ts = make_task_set(spec.tasks)
    ctx.store.replace_task_set("fr", "d", {}, [], [(ts.splits[t.id], t) for t in ts.tasks])
    fresh = draw_fresh_tasks(ctx, spec.onpolicy.fresh_tasks, ts.train)
    assert len(fresh) == 12 and not {t.id for t in fresh} & {t.id for t in ts.tasks}
    assert not {t.content_digest() for t in fresh} & set(ts.digests.values())
    assert draw_fresh_tasks(ctx, 0, ts.train) == []


def test_round_tasks_are_a_seeded_draw_that_changes_by_round():
    tasks = [notes_task(i) for i in range(20)]
    assert round_tasks(tasks, None, 0, 1) == sorted(tasks, key=lambda t: t.id)
    one, two = round_tasks(tasks, 5, 0, 1), round_tasks(tasks, 5, 0, 2)
    assert len(one) == 5 and one == round_tasks(list(reversed(tasks)), 5, 0, 1) and one != two
    assert round_tasks(tasks, 50, 0, 1) == round_tasks(tasks, None, 0, 1)


def test_demo_onpolicy_preset_is_the_demo_plus_the_stage():
    from env0_posttrain.making.presets import preset_data

    demo, demo_op = parse_spec(preset_data("demo", "x")), parse_spec(preset_data("demo-onpolicy", "x"))
    assert demo.onpolicy is None and demo_op.onpolicy.kind == "relabel"
    assert demo_op.model_dump(exclude={"onpolicy", "description"}) == demo.model_dump(exclude={"onpolicy", "description"})
