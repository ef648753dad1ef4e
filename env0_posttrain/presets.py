"""Named starting points for a run spec: `default` (the seeds' recipe) and `demo` (offline, minutes)."""

from __future__ import annotations

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


PRESETS = {"demo": _demo, "demo-rl": _demo_rl, "default": _default}


def preset_data(name: str, run_id: str) -> dict[str, Any]:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    return PRESETS[name](run_id)
