"""The demo's base is the student shipped in the repository: its recipe (the preset's task set, corpus and config)
finds the shipped entry, so a cold demo copies it in instead of pre-training. A change to the corpus, the task
set or the recipe fails here, where `env0-posttrain base rebuild --write` ships the new base."""

from __future__ import annotations

from env0_posttrain.making.new_run import build_spec
from env0_posttrain.stages.base_model import tiny_recipe
from env0_posttrain.tasks import make_task_set
from env0_posttrain.train.tiny_student import shipped
from env0_posttrain.train.tiny_student.build import student_digest


def test_the_demo_preset_is_served_by_the_shipped_student():
    spec, _ = build_spec("demo", "demo")
    corpus, entities, config = tiny_recipe(spec, sorted(make_task_set(spec.tasks).split("train"), key=lambda t: t.id))
    recipe = student_digest(corpus, entities, config)
    entry = shipped.find_shipped(recipe, config.architecture)
    assert entry is not None, (f"no shipped student for the demo's recipe {recipe}: rebuild and ship it with "
                               "`env0-posttrain base rebuild --write`")
    assert entry.name == f"tiny-qwen3-{student_digest(corpus, entities, config, entry.torch_threads)}"
    shipped.verify(entry)
