"""On-policy GRPO after SFT: TRL's `GRPOTrainer`, whose episodes are played by the eval harness itself.

Why a `rollout_func` and not TRL's own tool loop or `environment_factory`: those render tool results
and parse tool calls their own way, and run tools as Python methods. Here the policy being trained
is wrapped as the `env0-local` provider (`LocalModel.from_loaded`) and each episode is one
`run_episode` call, so the prompt rendering, the tool-call parser, the workspace, the stop rules and
the verifier are the ones `rl_eval_trajectories` uses, byte for byte.

An episode becomes one GRPO sample: the first model call's prompt ids, then every model call's
completion ids (trained, `env_mask` 1) joined by the tokens the next prompt adds (tool results, the
next generation prompt: `env_mask` 0). That is exact while each prompt extends the previous prompt +
completion; the first call whose prompt does not ends the sample there (counted in `cut_episodes`).
The reward is the verifier's (partial credit in [0, 1], a tripped safety gate -1), read through
`tasks.reward.optimiser_reward`: an unscored episode (the verifier crashed, timed out or wrote no valid
reward) gets the task's minimum, so breaking the verifier never pays more than being caught.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from env0_posttrain.spec.runspec import EvalSpec, RLSpec
from env0_posttrain.tasks.reward import checked_reward, optimiser_reward
from env0_posttrain.train.model_card import CardInfo, finish_adapter_dir

TASK_KEY = "env0_task_id"  # carried on the prompt's user message: rollout_func sees prompts, not rows


@dataclass
class EpisodeSample:
    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    turns: int  # model calls in the sample
    cut: bool  # the episode went on past a call whose prompt did not extend the sample


def episode_sample(episode: Any) -> EpisodeSample:
    """The token sequence GRPO trains on, from the ids the harness captured per model call."""
    calls = [ex for ex in episode.exchanges if ex.prompt_token_ids is not None and ex.completion_token_ids is not None]
    if not calls:
        return EpisodeSample([], [], [], 0, False)
    prompt = list(calls[0].prompt_token_ids)
    seq, mask, turns, cut = list(prompt), [], 0, False
    for ex in calls:
        p = ex.prompt_token_ids
        if len(p) < len(seq) or p[: len(seq)] != seq:
            cut = True
            break
        gap = p[len(seq):]
        seq += gap + list(ex.completion_token_ids)
        mask += [0] * len(gap) + [1] * len(ex.completion_token_ids)
        turns += 1
    return EpisodeSample(prompt, seq[len(prompt):], mask, turns, cut)


def verifier_reward(prompts: list, completions: list, env0_reward: list[float], **_: Any) -> list[float]:
    """TRL reward function: the reward `rollout_func` computed when the harness played the episode (already
    `optimiser_reward`), checked again here: TRL would train on a NaN as readily as on a number."""
    return [checked_reward(r, f"env0_reward[{i}]") for i, r in enumerate(env0_reward)]


def task_prompt(task: Any, system_prompt: str) -> list[dict[str, Any]]:
    from env0_posttrain.agent.messages import system_message

    return [system_message(system_prompt, None), {"role": "user", "content": task.instruction, TASK_KEY: task.id}]


@dataclass
class HarnessRollouts:
    """`rollout_func` for GRPOTrainer: each prompt is one full episode through `run_episode`."""

    tasks: dict[str, Any]
    rl: RLSpec
    eval_spec: EvalSpec
    tokenizer: Any
    run_id: str
    env: Any = None
    calls: int = 0
    cut_episodes: int = 0
    log: list[dict[str, float]] = field(default_factory=list)

    def settings(self):
        from env0_posttrain.agent import AgentSettings

        settings = AgentSettings.for_eval(self.eval_spec)
        if self.rl.max_steps_per_episode:
            settings = settings.model_copy(update={"max_steps": self.rl.max_steps_per_episode})
        return settings

    def play(self, model: Any, task_ids: list[str]) -> list[Any]:
        from env0_posttrain.agent import ModelEndpoint, run_episode
        from env0_posttrain.agent.providers.local_model import LocalModel, register_loaded_model

        lm = LocalModel.from_loaded(f"{self.run_id}-rl-policy", model, self.tokenizer,
                                    device=str(next(model.parameters()).device), max_batch_size=64)
        endpoint = ModelEndpoint(model=register_loaded_model(lm), temperature=self.rl.temperature,
                                 max_tokens=self.eval_spec.max_tokens)
        settings = self.settings()
        step = self.calls
        self.calls += 1

        async def all_episodes():
            seen: dict[str, int] = {}
            jobs = []
            for tid in task_ids:
                seen[tid] = seen.get(tid, -1) + 1
                trial = step * 1000 + seen[tid]  # distinct seeds per step and per member of the group
                jobs.append(run_episode(self.tasks[tid], endpoint, settings, "rl", trial, self.run_id, env=self.env))
            return await asyncio.gather(*jobs)

        was_training = model.training
        model.eval()
        try:
            return asyncio.run(all_episodes())
        finally:
            model.train(was_training)

    def __call__(self, prompts: list, trainer: Any) -> dict[str, list]:
        import torch

        task_ids = [next(m[TASK_KEY] for m in p if m.get(TASK_KEY)) for p in prompts]
        model = trainer.accelerator.unwrap_model(trainer.model)
        # sampling must differ between members of a group and between runs with different seeds only
        torch.manual_seed(self.rl.seed * 100003 + self.calls)
        t0 = time.perf_counter()
        episodes = self.play(model, task_ids)
        play_s = time.perf_counter() - t0
        samples = [episode_sample(ep) for ep in episodes]
        self.cut_episodes += sum(s.cut for s in samples)
        rewards = [optimiser_reward(ep, self.tasks.get(ep.task_id)) for ep in episodes]
        turns = [s.turns for s in samples]
        metrics = trainer._metrics["train"]
        metrics["episode/model_calls"].append(sum(turns) / len(turns))
        metrics["episode/play_s"].append(play_s)
        metrics["episode/pass_rate"].append(sum(ep.passed for ep in episodes) / len(episodes))
        metrics["episode/safety_tripped"].append(sum(r < 0 for r in rewards) / len(rewards))
        for s in samples:  # an episode with no usable model call still needs one token to train on
            if not s.completion_ids:
                s.completion_ids, s.env_mask = [self.tokenizer.eos_token_id], [0]
        return {"prompt_ids": [s.prompt_ids for s in samples], "completion_ids": [s.completion_ids for s in samples],
                "logprobs": None, "env_mask": [s.env_mask for s in samples], "env0_reward": rewards}


class RLResult(BaseModel):
    adapter_dir: Path
    steps: int
    runtime_s: float
    episodes: int
    cut_episodes: int
    first_reward: float | None
    final_reward: float | None
    metrics: list[dict[str, Any]]
    device: str = "cpu"
    tensorboard_dir: Path | None = None


def _record(logs: dict[str, Any], step: int, wall_s: float) -> dict[str, Any]:
    """The per-step row stored in DuckDB: TRL's reward, KL and entropy, plus the harness's episode figures."""
    keep = {"loss": "loss", "reward": "reward", "reward_std": "reward_std", "kl": "kl", "entropy": "entropy",
            "frac_reward_zero_std": "frac_reward_zero_std",
            "completions/mean_length": "completion_tokens", "episode/model_calls": "episode_model_calls",
            "episode/pass_rate": "episode_pass_rate", "episode/safety_tripped": "episode_safety_tripped",
            "episode/play_s": "play_s", "step_time": "step_s",
            "learning_rate": "learning_rate", "grad_norm": "grad_norm"}
    row: dict[str, Any] = {"step": step, "wall_s": wall_s}
    row.update({new: float(logs[old]) for old, new in keep.items() if old in logs})
    return row


def train_rl(tasks: list, rl: RLSpec, eval_spec: EvalSpec, base: str | Path, sft_adapter: str | Path, out_dir: Path,
             run_id: str, on_log: Callable[[dict[str, Any]], None] | None = None, env: Any = None,
             base_ref: str | None = None, device: str | None = None) -> RLResult:
    """GRPO on `tasks`, continuing the SFT adapter; saves only the trained adapter to `out_dir`. `base_ref`: how
    the adapter names its base (default `base` as given; see lora_sft.train_lora). `device`: `student.device`
    (None = 'auto'); the policy trains and plays its episodes there (bf16 and activation checkpointing on CUDA)."""
    import os

    import torch
    from datasets import Dataset
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback, set_seed
    from trl import GRPOConfig, GRPOTrainer

    from env0_posttrain.agent.endpoint import DEFAULT_SYSTEM_PROMPT
    from env0_posttrain.util.devices import model_dtype, resolve_device
    from env0_posttrain.train.gpu.patch_scope import kernel_patches_undone
    from env0_posttrain.train.tracking.trackers import TENSORBOARD_DIRNAME, report_to_list, route_tensorboard
    from env0_posttrain.util import torch_threads

    torch_threads.apply(torch)

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    set_seed(rl.seed)
    random.seed(rl.seed)
    device = resolve_device(device)
    gpu = device == "cuda"
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=model_dtype(device))
    model = PeftModel.from_pretrained(model, str(sft_adapter), is_trainable=True)
    rollouts = HarnessRollouts({t.id: t for t in tasks}, rl, eval_spec, AutoTokenizer.from_pretrained(str(base)),
                               run_id, env=env)
    system_prompt = rollouts.settings().system_prompt or DEFAULT_SYSTEM_PROMPT
    rows = [{"prompt": task_prompt(t, system_prompt)} for t in tasks]
    # TRL decodes completions with this tokenizer; it has no response schema so a multi-turn completion is
    # decoded as text, never parsed (the harness already parsed every call)
    trl_tokenizer = AutoTokenizer.from_pretrained(str(base))
    if trl_tokenizer.pad_token is None:
        trl_tokenizer.pad_token = trl_tokenizer.eos_token
    config = GRPOConfig(
        output_dir=str(out_dir / "trainer"), learning_rate=rl.learning_rate, max_steps=rl.max_steps,
        per_device_train_batch_size=rl.prompts_per_step * rl.num_generations, gradient_accumulation_steps=1,
        num_generations=rl.num_generations, temperature=rl.temperature, beta=rl.beta, loss_type=rl.loss_type,
        max_completion_length=None, logging_steps=rl.logging_steps, save_strategy="no",
        report_to=report_to_list(rl.report_to), seed=rl.seed, bf16=gpu and model_dtype(device) == torch.bfloat16,
        use_cpu=not gpu, gradient_checkpointing=gpu, dataloader_num_workers=0, disable_tqdm=True,
    )
    records: list[dict[str, Any]] = []
    t0 = time.perf_counter()

    class _Log(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "reward" in logs:
                row = _record(logs, state.global_step, time.perf_counter() - t0)
                records.append(row)
                if on_log is not None:
                    on_log(dict(row))

    with kernel_patches_undone():
        trainer = GRPOTrainer(model=model, reward_funcs=[verifier_reward], args=config,
                              train_dataset=Dataset.from_list(rows), processing_class=trl_tokenizer,
                              rollout_func=rollouts, callbacks=[_Log()])
        tensorboard_dir = route_tensorboard(trainer, out_dir / TENSORBOARD_DIRNAME)
        from .tracking.progress import show_progress

        show_progress(trainer, "GRPO", lambda: {"episodes": rollouts.calls * rl.prompts_per_step * rl.num_generations})
        trainer.train()
    adapter_dir = out_dir / "adapter"
    trainer.model.save_pretrained(str(adapter_dir), selected_adapters=["default"])
    rewards = [r["reward"] for r in records if "reward" in r]
    finish_adapter_dir(adapter_dir, CardInfo(
        base_model=base_ref or str(base), run_id=run_id, dataset_provenance=f"GRPO on {len(tasks)} tasks after SFT",
        n_train_rows=len(tasks), hyperparameters=rl.model_dump(mode="json"),
        train_summary={"steps": trainer.state.global_step, "final_reward": rewards[-1] if rewards else None}))
    return RLResult(adapter_dir=adapter_dir, steps=trainer.state.global_step, runtime_s=time.perf_counter() - t0,
                    episodes=rollouts.calls * rl.prompts_per_step * rl.num_generations,
                    cut_episodes=rollouts.cut_episodes, first_reward=rewards[0] if rewards else None,
                    final_reward=rewards[-1] if rewards else None, metrics=records, device=device,
                    tensorboard_dir=tensorboard_dir)
