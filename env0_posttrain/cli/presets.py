"""Named starting points for a run spec: `default` (the seeds' recipe), `demo` (offline, minutes), and the seeds'
experiment on an env0 checkout (`seeds`: real models; `seeds-offline`: oracle teacher, tiny student)."""

from __future__ import annotations

import os
from typing import Any


def _demo(run_id: str) -> dict[str, Any]:
    """The offline demo: oracle teacher, tiny student built locally, starter templates.

    Starter templates take their arguments from a closed vocabulary (people, channels, labels,
    known files), so a tiny student can learn them in CPU minutes and be evaluated on unseen
    combinations of seen entities.
    """
    from env0_posttrain.train import TINY_DEMO_LORA, TINY_DEMO_STUDENT
    from env0_posttrain.train.demo_recipe import tiny_demo_task_selection

    return {
        "run_id": run_id,
        "description": "offline demo: oracle teacher -> tiny Qwen3 student, LoRA on CPU",
        "tasks": tiny_demo_task_selection(n_train=300, n_eval=60, seed=0).model_dump(mode="json"),
        "teacher": {"model": "env0-oracle/oracle", "skill": 0.85, "concurrency": 32},
        "student": {"model": "tiny-qwen3", "pretrain_steps": TINY_DEMO_STUDENT.pretrain_steps},
        "sft": {"min_reward": 1.0},
        "lora": dict(TINY_DEMO_LORA),
        "eval": {"trials": 3, "max_steps": 4, "max_tokens": 96, "concurrency": 64},
    }


def _demo_rl(run_id: str) -> dict[str, Any]:
    """The demo plus GRPO after SFT on the same training tasks (train/grpo.py; recipe in demo_recipe.py)."""
    from env0_posttrain.train.demo_recipe import TINY_DEMO_RL

    return _demo(run_id) | {"description": "offline demo + GRPO after SFT (tiny student, CPU)", "rl": dict(TINY_DEMO_RL)}


def _default(run_id: str) -> dict[str, Any]:
    return {"run_id": run_id}


MOBILE = "env-0-mobile"  # the seeds' corpus inside an env0 checkout (commit b7593e09)


def _seeds(run_id: str) -> dict[str, Any]:
    """Seed 000's design: train on tasks-train-mini (300), judge on the same 300 (seen300), on 100 drawn from
    tasks-train after removing the 300 (unseen100), and on tasks-eval with 3 trials (standard60). Folders are
    relative to env0.root (ENV0_ROOT when set, else --set env0.root=PATH)."""
    return {
        "run_id": run_id,
        "description": "the seeds' design: tasks-train-mini -> seen300, unseen100, standard60",
        "env0": {"root": os.environ.get("ENV0_ROOT") or None},
        "tasks": {"source": f"{MOBILE}/tasks-train-mini", "n_train": 300, "n_eval": 0, "seed": 0},
        "suites": [
            {"name": "seen300", "kind": "seen", "trials": 1},
            {"name": "unseen100", "kind": "packages", "source": f"{MOBILE}/tasks-train", "sample": 100, "seed": 0,
             "exclude_train": True, "trials": 1},
            {"name": "standard60", "kind": "packages", "source": f"{MOBILE}/tasks-eval", "trials": 3},
        ],
    }


# The offline variant acts through the shell surface: the oracle teacher types each package's solve.sh as one
# `terminal` command and the student learns to write it. On the tools surface every row carries the whole tool list
# of the task's services (a Gmail task's ~14k characters, a multi-app one's ~30k) and an oracle of up to ~10 calls;
# the tiny student learned none of it (base 0/571, adapter 0/571). A shell row is the short terminal/finish prompt
# (~1.1k tokens with the tiny tokenizer), the request, and one script of 350-850 tokens (rows of 2.1-2.8k tokens),
# which the eval's token budget must hold; an episode is one script and `finish`.
# bench/seeds_learning_bench.py measures the levers (docs/BENCHMARKS.md, "Seeds offline").
# The tiny base has read no shell text, so nearly every script token starts improbable: training the output head
# with the adapter halved the loss after 40 steps (5.5 -> 2.3, against 6.5 -> 4.4 after 30 with LoRA alone); two
# epochs (300 steps) take it to ~0.1 and are the first recipe whose adapter passes seen tasks.
SEEDS_OFFLINE_LORA = {"max_seq_length": 4096, "per_device_batch_size": 2, "max_steps": 300, "save_steps": 300,
                      "eval_fraction": 0.0, "modules_to_save": ["lm_head"]}
# The untrained base loops ("— Q3 Planning — Q3 Planning — ...") to the 1,024-token budget on every step: cut a
# reply whose last 256 tokens repeat one block of at most 64. No solve.sh of env0's 2,063 (tasks-train-mini,
# tasks-eval, tasks-train) repeats itself over 160 tiny-tokenizer tokens; three of tasks-eval do over 128 (rules of
# box-drawing characters in comments).
SEEDS_OFFLINE_EVAL = {"max_steps": 4, "max_tokens": 1024, "concurrency": 16, "surface": "shell",
                      "repetition_window": 256}


def _seeds_offline(run_id: str) -> dict[str, Any]:
    """The seeds' design offline: the oracle teacher runs each package's solve.sh on the shell surface, the tiny
    student is built locally; budgets sized for env0's scripts (the report says where one is still short)."""
    from env0_posttrain.train import TINY_DEMO_LORA, TINY_DEMO_STUDENT

    return _seeds(run_id) | {
        "description": "the seeds' design offline: oracle teacher typing solve.sh in a shell -> tiny Qwen3 student",
        "teacher": {"model": "env0-oracle/oracle", "skill": 1.0, "concurrency": 16, "surface": "shell"},
        "student": {"model": "tiny-qwen3", "pretrain_steps": TINY_DEMO_STUDENT.pretrain_steps},
        "lora": dict(TINY_DEMO_LORA) | SEEDS_OFFLINE_LORA,
        "eval": dict(SEEDS_OFFLINE_EVAL),
    }


PRESETS = {"demo": _demo, "demo-rl": _demo_rl, "default": _default, "seeds": _seeds, "seeds-offline": _seeds_offline}


def preset_data(name: str, run_id: str) -> dict[str, Any]:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    return PRESETS[name](run_id)
