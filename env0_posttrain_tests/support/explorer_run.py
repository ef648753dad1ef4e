"""A tiny real eval run in a store, for the explorer and dataframe tests: a generated task set, the one agent loop
and the offline oracle at three skills standing in for base, adapter and teacher (seconds, no model)."""

from __future__ import annotations

from pathlib import Path

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
from env0_posttrain.spec.runspec import RunSpec, TaskSelection
from env0_posttrain.store import Store
from env0_posttrain.tasks import make_task_set

RUN_ID = "explorer-run"
ARM_SKILLS = (("base", 0.0), ("sft", 0.9), ("teacher_eval", 1.0))
TRIALS = 2


def write_tiny_run(data_dir: Path, n_eval: int = 6, run_id: str = RUN_ID, secret: str | None = None) -> Store:
    """Episodes of every arm stored as the rollout stages store them (one finished round per arm).
    `secret`: the name of an environment variable the spec names as the teacher's key (never its value)."""
    store = Store(data_dir / "env0.duckdb")
    selection = TaskSelection(families=["calendar", "mail", "drive"], n_train=2, n_eval=n_eval, n_heldout=0, seed=1)
    teacher = {"model": "env0-oracle/oracle"} | ({"api_key_env": secret} if secret else {})
    spec = RunSpec(run_id=run_id, tasks=selection.model_dump(), teacher=teacher)
    store.upsert_run(spec)
    ts = make_task_set(selection)
    store.replace_task_set(run_id, "digest-" + run_id, {}, [], [(ts.splits[t.id], t) for t in ts.tasks])
    tasks = ts.split("eval")
    for arm, skill in ARM_SKILLS:
        round_id = store.open_round(run_id, arm, f"env0-oracle/oracle@{skill}", len(tasks) * TRIALS)
        episodes = []
        run_rollouts_sync(tasks, arm, TRIALS, oracle_endpoint(skill=skill, seed=3), AgentSettings(max_steps=8), run_id,
                          on_episode=episodes.append, progress=False)
        store.write_episodes(round_id, episodes)
        store.finish_round(round_id, {"episodes": len(episodes)})
    return store
