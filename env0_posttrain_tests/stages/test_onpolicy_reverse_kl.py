"""The on-policy stage's reverse_kl kind: its setup builds the offline tiny teacher from the run's teacher SFT rows
(cached beside the tiny students) and refuses a teacher that reads ids differently before anything runs; its round
step trains the adapter that played on the round's own temperature-1 episodes and reports the round's figures."""

from __future__ import annotations

import asyncio
import logging
import shutil

import pytest
import torch

from env0_posttrain.spec.runspec import parse_spec
from env0_posttrain.stages.onpolicy_adapter import ROUND_SETUPS, ROUND_STEPS, RoundInputs
from env0_posttrain.train.reverse_kl.compat import TeacherMismatch
from env0_posttrain_tests.support.agent import NotesEnv, notes_task
from env0_posttrain_tests.support.reverse_kl import (
    SYSTEM_PROMPT,
    notes_teacher_rows,
    small_teacher_spec,
    student_and_teacher,
)

RUN = "rkl-stage"


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """(root, student dir, SFT adapter dir, teacher dir, four episodes the student+adapter played at temperature 1)."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model, run_episode
    from env0_posttrain.agent.providers.local_model import unregister_local_model
    from env0_posttrain.spec.runspec import EvalSpec

    root = tmp_path_factory.mktemp("rkl-stage")
    student, teacher = student_and_teacher(root)
    torch.manual_seed(0)
    sft = get_peft_model(AutoModelForCausalLM.from_pretrained(str(student)),
                         LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj", "o_proj", "down_proj"],
                                    lora_dropout=0.0))
    sft.save_pretrained(str(root / "sft"))
    eval_spec = EvalSpec(max_steps=2, max_tokens=24, temperature=1.0)
    model_id = register_local_model("rkl-stage-student", student, root / "sft")
    endpoint, settings = ModelEndpoint.for_eval(model_id, eval_spec), AgentSettings.for_eval(eval_spec, system_prompt=SYSTEM_PROMPT)
    episodes = []
    for i in range(4):  # one at a time: the sampled tokens then depend on the seed alone
        torch.manual_seed(200 + i)
        episodes.append(asyncio.run(run_episode(notes_task(i % 2), endpoint, settings, "onpolicy", i, RUN,
                                                env=NotesEnv())))
    unregister_local_model(model_id)
    return root, student, root / "sft", teacher, episodes


def _ctx(root, student, **section):
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.store import Store
    from env0_posttrain.util.paths import Paths

    paths = Paths(root / "data")
    spec = parse_spec({"run_id": RUN, "student": {"model": str(student), "device": "cpu"},
                       "onpolicy": {"kind": "reverse_kl", "rounds": 1, "steps_per_round": 2, "episodes_per_step": 2,
                                    "learning_rate": 5e-3, "report_to": [], **section}})
    return StageContext(RUN, spec, Store(paths.db), paths, logging.getLogger("t"))


def _tokenizer(student):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(student))


def test_reverse_kl_round_trains_the_adapter_that_played_against_the_tiny_teacher(played, tmp_path):
    root, student, sft, _, episodes = played
    ctx = _ctx(tmp_path, student, teacher="tiny", tiny_teacher=small_teacher_spec().model_dump())
    with pytest.raises(RuntimeError, match="no.*materialize sft_dataset first|has none"):
        ROUND_SETUPS["reverse_kl"](ctx, student, _tokenizer(student))  # no teacher rows yet: nothing to build from
    ctx.store.replace_sft_rows(RUN, [(f"t{i}", 1.0, r) for i, r in enumerate(notes_teacher_rows())], None)
    state = ROUND_SETUPS["reverse_kl"](ctx, student, _tokenizer(student))
    cached = list(ctx.paths.models.glob("tiny-teacher-*"))
    assert len(cached) == 1 and state["teacher"].name.startswith("tiny teacher")  # under the run's data dir
    logged = []
    out = ROUND_STEPS["reverse_kl"](ctx, RoundInputs(1, episodes, {}, sft, tmp_path / "round-1", 0, state),
                                    student, _tokenizer(student), logged.append)
    m = out.metrics
    assert out.steps == 2 and [r["step"] for r in logged] == [1, 2]
    assert out.adapter == tmp_path / "round-1" / "train" / "adapter" and (out.adapter / "adapter_model.safetensors").exists()
    assert m["episodes_trained"] + m["empty_episodes"] + m["teacher_errors"] == len(episodes) and m["teacher_errors"] == 0
    expected = sum(len(ex.completion_token_ids) for e in episodes for ex in e.exchanges if ex.completion_token_ids)
    assert 0 < m["tokens_scored"] <= expected and m["tokens_trained"] == m["tokens_scored"]
    assert m["reverse_kl_before"] > m["reverse_kl_after"]  # two steps toward the teacher on these very tokens


def test_an_incompatible_teacher_is_refused_naming_both(played, tmp_path):
    root, student, _, teacher, _ = played
    other = tmp_path / "other-teacher"
    shutil.copytree(teacher, other)
    template = other / "chat_template.jinja"
    template.write_text(template.read_text().replace("<|im_start|>", "<|im_start|> "))
    ctx = _ctx(tmp_path, student, teacher="local", teacher_path=str(other))
    with pytest.raises(TeacherMismatch) as err:
        ROUND_SETUPS["reverse_kl"](ctx, student, _tokenizer(student))
    assert str(other) in str(err.value) and str(student) in str(err.value) and "chat template differs" in str(err.value)
    ok = _ctx(tmp_path, student, teacher="local", teacher_path=str(teacher))
    assert ROUND_SETUPS["reverse_kl"](ok, student, _tokenizer(student))["teacher"].name == str(teacher)
