"""GRPO after SFT: a training episode is an eval-harness episode (same messages, same token ids), the
sample GRPO trains on masks exactly the model's tokens, and the reward is the verifier's."""

from __future__ import annotations

import asyncio
import copy
import logging

import pytest
import torch

from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model, run_episode
from env0_posttrain.agent.providers.local_model import local_model
from env0_posttrain.spec.runspec import EvalSpec, RLSpec, parse_spec
from env0_posttrain.train.grpo import HarnessRollouts, episode_sample, task_prompt, verifier_reward
from env0_posttrain_tests.support.agent import NotesEnv, build_tiny_student, notes_task
from env0_posttrain_tests.support.paths import REPO

SCRIPT = [
    "<tool_call>\n<function=notes_create>\n<parameter=title>\nnote 1-a\n</parameter>\n"
    "<parameter=body>\nbody of note 1-a\n</parameter>\n</function>\n</tool_call><|im_end|>",
    "<tool_call>\n<function=notes_create>\n<parameter=title>\nnote 1-b\n</parameter>\n"
    "<parameter=body>\nbody of note 1-b\n</parameter>\n</function>\n</tool_call><|im_end|>",
    "Both notes are created.<|im_end|>",
]


class Scripted:
    """Stands in for `model.generate`: the same sampled text, turn by turn, whoever asks."""

    def __init__(self, tokenizer):
        self.turns = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in SCRIPT]
        self.i = 0

    def __call__(self, input_ids, attention_mask, **kw):
        out = torch.tensor([self.turns[min(self.i, len(self.turns) - 1)]] * input_ids.shape[0])
        self.i += 1
        return torch.cat([input_ids, out], dim=1)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-grpo")
    build_tiny_student(path)
    return path


def _without_call_ids(messages):
    out = copy.deepcopy(messages)
    for m in out:
        m.pop("tool_call_id", None)
        for c in m.get("tool_calls") or []:
            c.pop("id", None)
    return out


def test_training_rollout_and_eval_rollout_give_identical_messages_and_token_ids(tiny_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    task, eval_spec = notes_task(1), EvalSpec(max_steps=4, max_tokens=64, temperature=1.0)
    # the eval harness: the rl arm's endpoint as rl_eval_trajectories builds it
    eval_id = register_local_model("grpo-eval", tiny_dir)
    lm = local_model("grpo-eval")
    lm.model.generate = Scripted(lm.tokenizer)
    lm.prefix_cache = None  # the scripted `generate` fills no KV cache; the cache's own identity: test_agent_prefix_cache
    endpoint = ModelEndpoint.for_eval(eval_id, eval_spec)
    eval_ep = asyncio.run(run_episode(task, endpoint, AgentSettings.for_eval(eval_spec), "rl", 0, "r", env=NotesEnv()))
    # the training side: the policy object GRPOTrainer holds, played through HarnessRollouts
    policy = AutoModelForCausalLM.from_pretrained(str(tiny_dir))
    policy.generate = Scripted(lm.tokenizer)
    rollouts = HarnessRollouts({task.id: task}, RLSpec(temperature=1.0), eval_spec,
                               AutoTokenizer.from_pretrained(str(tiny_dir)), "r", env=NotesEnv())
    [train_ep] = rollouts.play(policy, [task.id])

    assert eval_ep.passed and train_ep.passed and len(train_ep.exchanges) == 3
    assert _without_call_ids(train_ep.messages) == _without_call_ids(eval_ep.messages)
    for a, b in zip(train_ep.exchanges, eval_ep.exchanges, strict=True):
        assert a.prompt_token_ids == b.prompt_token_ids and a.completion_token_ids == b.completion_token_ids
    sample, other = episode_sample(train_ep), episode_sample(eval_ep)
    assert (sample.prompt_ids, sample.completion_ids, sample.env_mask) == (other.prompt_ids, other.completion_ids, other.env_mask)
    # the trained tokens are exactly the three sampled replies, in order; the rest is tool output / prompts
    trained = [t for t, m in zip(sample.completion_ids, sample.env_mask, strict=True) if m]
    assert trained == [t for ex in train_ep.exchanges for t in ex.completion_token_ids]
    last = train_ep.exchanges[-1]
    assert sample.prompt_ids + sample.completion_ids == last.prompt_token_ids + last.completion_token_ids
    assert not sample.cut and sample.turns == 3
    # the prompt GRPO sees is the harness's first two messages, with the task id riding along
    prompt = task_prompt(task, AgentSettings.for_eval(eval_spec).system_prompt)
    assert [{k: m[k] for k in ("role", "content")} for m in prompt] == train_ep.messages[:2]


def test_sample_stops_where_a_prompt_does_not_extend_the_previous_turn(tiny_dir):
    from types import SimpleNamespace as NS

    ex = lambda p, c: NS(prompt_token_ids=p, completion_token_ids=c)  # noqa: E731
    s = episode_sample(NS(exchanges=[ex([1, 2], [3]), ex([1, 2, 3, 9], [4]), ex([7, 7], [5])]))
    assert (s.prompt_ids, s.completion_ids, s.env_mask, s.turns, s.cut) == ([1, 2], [3, 9, 4], [1, 0, 1], 2, True)


def test_reward_is_the_verifiers_with_safety_negative():
    assert verifier_reward([], [], env0_reward=[1.0, 0.5, -1.0]) == [1.0, 0.5, -1.0]


def test_rl_section_is_optional_and_strict():
    assert parse_spec({"run_id": "x"}).rl is None
    assert parse_spec({"run_id": "x", "rl": {"max_steps": 3}}).rl.max_steps == 3
    with pytest.raises(ValueError, match="rl.num_generations"):
        parse_spec({"run_id": "x", "rl": {"num_generations": 1}})


@pytest.mark.slow
def test_grpo_continues_the_sft_adapter_and_logs_reward_kl_entropy(tiny_dir, tmp_path, monkeypatch, caplog):
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from env0_posttrain.train.grpo import train_rl

    torch.manual_seed(0)
    sft = get_peft_model(AutoModelForCausalLM.from_pretrained(str(tiny_dir)),
                         LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    sft.save_pretrained(str(tmp_path / "sft"))
    logged, seen = [], []

    def spread(prompts, completions, env0_reward, **kw):  # a random policy never passes: give the group a spread
        seen.extend(env0_reward)
        return [1.0 if i % 2 else 0.0 for i in range(len(env0_reward))]

    monkeypatch.setattr("env0_posttrain.train.grpo.verifier_reward", spread)
    rl = RLSpec(max_steps=2, prompts_per_step=1, num_generations=2, learning_rate=5e-2, beta=0.1)
    monkeypatch.setenv("ENV0_PROGRESS_SECONDS", "0")
    with caplog.at_level(logging.INFO, logger="env0_posttrain"):
        result = train_rl([notes_task(1), notes_task(2)], rl, EvalSpec(max_steps=2, max_tokens=12), tiny_dir,
                          tmp_path / "sft", tmp_path / "rl", "r", on_log=logged.append, env=NotesEnv())
    progress = [r.getMessage() for r in caplog.records if r.getMessage().startswith("GRPO: ")]  # the event log's lines
    assert [p.split(" (")[0] for p in progress] == ["GRPO: 1/2 steps", "GRPO: 2/2 steps"]
    assert "episodes 4" in progress[-1] and "reward " in progress[-1]
    assert seen == [0.0] * 4  # the harness's verifier rewards reached the reward function
    assert result.steps == 2 and result.episodes == 4 and [r["step"] for r in logged] == [1, 2]
    assert {"reward", "reward_std", "kl", "entropy", "episode_model_calls"} <= set(logged[0])
    before = load_file(str(tmp_path / "sft" / "adapter_model.safetensors"))
    after = load_file(str(result.adapter_dir / "adapter_model.safetensors"))
    assert before.keys() == after.keys()  # only the trained adapter is saved, not TRL's frozen "ref" copy
    assert any(not torch.equal(before[k], after[k]) for k in before)
    from env0_posttrain.train.tracking.trackers import event_files

    assert result.device == "cpu" and event_files(result.tensorboard_dir)  # rl.report_to's default: TensorBoard


def test_runs_without_an_rl_section_skip_both_rl_stages(tmp_path):
    import logging

    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages.rl_adapter import evaluate_rl, train_rl_adapter
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.store import Store

    paths = Paths(tmp_path)
    spec = parse_spec({"run_id": "no-rl"})
    ctx = StageContext("no-rl", spec, Store(paths.db), paths, logging.getLogger("t"))
    for stage in (train_rl_adapter, evaluate_rl):
        res = stage(ctx)
        assert res.metadata["skipped"] is True and all(c.passed is None for c in res.checks)
    assert ctx.store.latest_training("no-rl:rl") is None and ctx.store.latest_round("no-rl", "rl") is None
    with_rl = StageContext("rl", parse_spec({"run_id": "rl", "rl": {}}), Store(paths.db), paths, logging.getLogger("t"))
    with pytest.raises(RuntimeError, match="materialize lora_adapter first"):
        train_rl_adapter(with_rl)


def test_demo_rl_preset_is_the_demo_plus_the_measured_rl_recipe():
    import yaml

    from env0_posttrain.making.presets import preset_data

    demo, demo_rl = parse_spec(preset_data("demo", "x")), parse_spec(preset_data("demo-rl", "x"))
    recipe = yaml.safe_load((REPO / "env0_posttrain/spec/presets/demo-rl.yaml").read_text())["rl"]
    assert demo.rl is None and demo_rl.rl == RLSpec(**recipe)
    assert demo_rl.model_dump(exclude={"rl", "description"}) == demo.model_dump(exclude={"rl", "description"})
