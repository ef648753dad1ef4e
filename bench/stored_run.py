"""A stored run, opened the way the benches that replay one need it: its data dir, spec, store and workspace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class StoredRun:
    paths: Any  # util.paths.Paths
    spec: Any  # spec.runspec.RunSpec
    store: Any  # store.Store
    env: Any  # agent.environment.WorkspaceEnv: the run's env0 checkout and package folder, passed explicitly

    def suite_tasks(self, run_id: str, suite: str) -> list:
        from env0_posttrain.store.suites import suite_task_json
        from env0_posttrain.tasks.model import Task

        from env0_posttrain.spec.suites import DEFAULT_SUITE

        if suite == DEFAULT_SUITE:  # the tasks.n_eval split, stored with the task set rather than as a suite
            return sorted((Task.model_validate_json(j) for _, j in self.store.load_tasks(run_id, "eval")),
                          key=lambda t: t.id)
        return [Task.model_validate_json(j) for j in suite_task_json(self.store, run_id, suite)]

    def base(self, run_id: str):
        from env0_posttrain.stages.base_model import base_student

        return base_student(self.spec, self.store, run_id, self.paths)


def open_run(data_dir: str, run_id: str) -> StoredRun:
    from env0_posttrain.agent.environment import WorkspaceEnv
    from env0_posttrain.spec.runspec import load_spec
    from env0_posttrain.stages.context import task_paths
    from env0_posttrain.store import Store
    from env0_posttrain.util.paths import Paths

    paths = Paths.from_env(data_dir)
    spec = load_spec(paths.spec(run_id))
    return StoredRun(paths, spec, Store(paths.db), WorkspaceEnv(task_paths(spec)))
