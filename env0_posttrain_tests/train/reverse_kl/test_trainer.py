"""The reverse-KL trainer on the student's own harness episodes: the ids the teacher scores are exactly the sampled
ones, a mismatching teacher is refused before anything trains, and a few steps lower the reverse KL to the tiny
teacher on the training episodes (both the sampled-token estimate and the exact KL over the vocabulary)."""

from __future__ import annotations

import asyncio

import pytest
import torch

from env0_posttrain.spec.onpolicy_kl import ReverseKLSpec
from env0_posttrain.train.reverse_kl.scorers import LocalTeacher
from env0_posttrain.train.reverse_kl.trainer import SampledIdsMismatch, episode_tokens, train_reverse_kl
from env0_posttrain_tests.support.agent import NotesEnv, notes_task
from env0_posttrain_tests.support.reverse_kl import SYSTEM_PROMPT, student_and_teacher


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """(student dir, SFT adapter dir, teacher dir, six episodes the student+adapter played in the eval harness)."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model, run_episode
    from env0_posttrain.spec.runspec import EvalSpec

    root = tmp_path_factory.mktemp("rkl-train")
    student, teacher = student_and_teacher(root)
    torch.manual_seed(0)
    sft = get_peft_model(AutoModelForCausalLM.from_pretrained(str(student)),
                         LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj", "o_proj", "down_proj"],
                                    lora_dropout=0.1))
    sft.save_pretrained(str(root / "sft"))
    eval_spec = EvalSpec(max_steps=2, max_tokens=24, temperature=1.0)
    endpoint = ModelEndpoint.for_eval(register_local_model("rkl-student", student, root / "sft"), eval_spec)
    settings = AgentSettings.for_eval(eval_spec, system_prompt=SYSTEM_PROMPT)
    episodes = []
    for i in range(6):  # one at a time: the sampled tokens then depend on the seed alone
        torch.manual_seed(100 + i)
        episodes.append(asyncio.run(run_episode(notes_task(i % 3), endpoint, settings, "rl", i, "r", env=NotesEnv())))
    return student, root / "sft", teacher, episodes


class Recording:
    """A LocalTeacher that keeps the sequences it was asked to score."""

    def __init__(self, inner):
        self.inner, self.name, self.tokenizer, self.seen = inner, inner.name, inner.tokenizer, []

    def score(self, sequences):
        self.seen += [list(s) for s in sequences]
        return self.inner.score(sequences)


def _exact_kl(student, adapter, teacher, episodes) -> float:
    """Mean exact KL(student || teacher) over the vocabulary at the states where the student sampled a token."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from env0_posttrain.train.reverse_kl.loss import vocab_reverse_kl

    s_model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(str(student)), str(adapter)).eval()
    t_model = AutoModelForCausalLM.from_pretrained(str(teacher)).eval()
    total = count = 0.0
    for ep in episodes:
        e = episode_tokens(ep)
        ids = torch.tensor([e.ids])
        with torch.no_grad():
            s_logits, t_logits = s_model(ids).logits[:, :-1], t_model(ids).logits[:, :-1]
        mask = torch.tensor([e.sampled[1:]])
        n = float(mask.sum())
        total += vocab_reverse_kl(s_logits, t_logits, mask) * n
        count += n
    return total / count


def test_the_ids_scored_are_exactly_the_ids_the_student_sampled(setup, monkeypatch):
    student, sft, teacher_dir, episodes = setup
    for ep in episodes:
        e = episode_tokens(ep.model_dump(mode="json"))  # the store's dict shape is taken too
        sampled = [t for t, m in zip(e.ids, e.sampled, strict=True) if m]
        assert sampled == [t for ex in ep.exchanges for t in ex.completion_token_ids] and sampled
        assert e.ids[:len(ep.exchanges[0].prompt_token_ids)] == ep.exchanges[0].prompt_token_ids
    # a join that marks a tool-result token as sampled is caught, naming the episode
    from env0_posttrain.train import grpo

    real = grpo.episode_sample

    def shifted(episode):
        s = real(episode)
        s.env_mask = [0] + s.env_mask[:-1]
        return s

    monkeypatch.setattr(grpo, "episode_sample", shifted)
    with pytest.raises(SampledIdsMismatch, match=r"episode notes-0#0"):
        episode_tokens(episodes[0])


def test_a_teacher_with_another_template_is_refused_before_training(setup, tmp_path):
    from env0_posttrain.train.reverse_kl.compat import TeacherMismatch

    student, sft, teacher_dir, episodes = setup
    teacher = LocalTeacher(teacher_dir)
    teacher.tokenizer.chat_template += "\n"
    with pytest.raises(TeacherMismatch, match="chat template differs"):
        train_reverse_kl(student, sft, episodes, teacher, ReverseKLSpec(steps=1, report_to=[]), tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_few_steps_lower_the_reverse_kl_on_the_training_episodes(setup, tmp_path):
    from safetensors.torch import load_file

    from env0_posttrain.train.tracking.trackers import event_files

    student, sft, teacher_dir, episodes = setup
    teacher = Recording(LocalTeacher(teacher_dir))
    settings = ReverseKLSpec(teacher="local", teacher_path=str(teacher_dir), steps=6, episodes_per_step=3,
                             learning_rate=1e-2, seed=0)
    logged = []
    result = train_reverse_kl(student, sft, episodes, teacher, settings, tmp_path / "out", run_id="r",
                              on_log=logged.append)
    # the teacher scored each episode once, and the tokens it scored as sampled are the harness's completion ids
    assert len(teacher.seen) == 6
    for seq, ep in zip(teacher.seen, episodes, strict=True):
        assert seq == episode_tokens(ep).ids
    assert result.episodes_trained == 6 and result.teacher_errors == {} and result.steps == 6
    assert result.tokens_scored == sum(len(ex.completion_token_ids) for ep in episodes for ex in ep.exchanges)
    assert [r["step"] for r in logged] == list(range(1, 7))
    assert {"reverse_kl", "tokens_scored", "teacher_errors", "loss"} <= set(logged[0])
    # measured at this seed: estimate 0.247 -> 0.210, exact 0.277 -> 0.236; a tenth down is a real decrease
    assert result.final_reverse_kl < 0.9 * result.initial_reverse_kl
    before, after = _exact_kl(student, sft, teacher_dir, episodes), _exact_kl(student, result.adapter_dir, teacher_dir, episodes)
    assert after < 0.9 * before
    a, b = load_file(str(sft / "adapter_model.safetensors")), load_file(str(result.adapter_dir / "adapter_model.safetensors"))
    assert a.keys() == b.keys() and any(not torch.equal(a[k], b[k]) for k in a)
    assert event_files(result.tensorboard_dir)


def test_hostile_teacher_scores_are_counted_and_left_out(setup, tmp_path):
    from env0_posttrain.train.reverse_kl.scorers import TeacherScore

    student, sft, teacher_dir, episodes = setup
    inner = LocalTeacher(teacher_dir)

    class HalfBroken(Recording):
        def score(self, sequences):
            good = self.inner.score(sequences)
            return [g if i % 2 else TeacherScore(None, "nonfinite: log-probability 3 is nan") for i, g in enumerate(good)]

    result = train_reverse_kl(student, sft, episodes, HalfBroken(inner), ReverseKLSpec(steps=1, report_to=[]),
                              tmp_path / "out")
    assert result.teacher_errors == {"nonfinite": 3} and result.episodes_trained == 3
    assert result.metrics[0]["teacher_errors"] == 3
    with pytest.raises(ValueError, match="none of 6 episodes can train"):
        train_reverse_kl(student, sft, episodes, type("Dead", (HalfBroken,), {"score": lambda self, s: [
            TeacherScore(None, "http: down") for _ in s]})(inner), ReverseKLSpec(steps=1, report_to=[]), tmp_path / "o2")
