"""Which model plays which arm of a run: one place that maps a RunSpec to harness endpoints.

Base and adapter share everything but the adapter (same harness, same decoding, same limits);
the teacher differs only by its model and its teacher-only steering prompt.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model
from env0_posttrain.paths import Paths
from env0_posttrain.runspec import RunSpec
from env0_posttrain.store import Store

log = logging.getLogger("env0_posttrain")
TINY_STUDENTS = ("tiny-qwen3", "tiny-qwen3_5")
# Student directories this process already has, by (student spec, cache dir, training tasks): a run
# asks for its base in several stages, and rebuilding the corpus only to find the cache costs ~2 s.
_BASE_STUDENTS: dict[str, Path] = {}


def rollout_settings(spec: RunSpec, arm: str) -> AgentSettings:
    if arm in ("teacher", "teacher_eval"):
        return AgentSettings.for_teacher(spec.teacher, max_steps=spec.teacher.max_steps)
    return AgentSettings.for_eval(spec.eval)


def teacher_endpoint(spec: RunSpec, tasks: list | None = None) -> ModelEndpoint:
    """The teacher through litellm; the offline oracle needs the tasks it plays registered first."""
    if spec.teacher.model.startswith("env0-oracle/") and tasks is not None:
        from env0_posttrain.agent import register_tasks

        register_tasks(tasks)
    return ModelEndpoint.from_teacher(spec.teacher, seed=spec.tasks.seed)


def ensure_base_student(spec: RunSpec, store: Store, run_id: str, paths: Paths) -> Path | str:
    """The student's base weights: built locally (tiny) and cached, or a local path / hub id as given."""
    if spec.student.model not in TINY_STUDENTS:
        return spec.student.model
    from env0_posttrain.tasks.model import Task
    from env0_posttrain.train import TINY_DEMO_STUDENT, ensure_tiny_student
    from env0_posttrain.train.student_corpus import student_corpus
    from env0_posttrain.train.tiny_student import MARKER_FILE

    rows = [j for _, j in store.load_tasks(run_id, "train")]
    key = hashlib.sha256("\n".join([spec.student.model_dump_json(), str(paths.models), *rows]).encode()).hexdigest()
    known = _BASE_STUDENTS.get(key)
    if known is not None and (known / MARKER_FILE).exists():
        return known
    corpus, entities = student_corpus([Task.model_validate_json(j) for j in rows], spec.student.corpus)
    arch = "qwen3_5_text" if spec.student.model == "tiny-qwen3_5" else "qwen3"
    config = TINY_DEMO_STUDENT.model_copy(update={"architecture": arch, "pretrain_steps": spec.student.pretrain_steps})
    path = ensure_tiny_student(paths.models, corpus, entities, config)
    _BASE_STUDENTS[key] = path
    return path


def arm_endpoint(spec: RunSpec, arm: str, store: Store, run_id: str, paths: Paths, tasks: list) -> ModelEndpoint:
    if arm == "teacher_eval":
        return teacher_endpoint(spec, tasks)
    sampling = {"temperature": spec.eval.temperature, "max_tokens": spec.eval.max_tokens}
    training = store.latest_training(run_id) if arm == "sft" else None
    if arm == "sft" and training is None:
        raise RuntimeError(f"run {run_id}: no finished training; materialize lora_adapter first")
    if arm == "rl":  # the GRPO adapter is stored under <run_id>:rl (see rl_stages.py)
        training = store.latest_training(f"{run_id}:rl")
        if training is None:
            raise RuntimeError(f"run {run_id}: no finished RL training; materialize rl_adapter first")
    if spec.hosting.kind == "openai_compatible":
        from env0_posttrain.train import adapter_serving_name

        name = spec.hosting.base_model_name or spec.student.model
        if arm in ("sft", "rl"):
            name = adapter_serving_name(spec.hosting.adapter_name_prefix, training["revision"])
        return ModelEndpoint(model=f"hosted_vllm/{name}", api_base=spec.hosting.api_base, **sampling)
    base = ensure_base_student(spec, store, run_id, paths)
    if arm == "base":
        model_id = register_local_model(f"{run_id}-base", base)
    else:
        model_id = register_local_model(f"{run_id}-{arm}-{training['revision']}", base, adapter_path=training["adapter_path"])
    return ModelEndpoint(model=model_id, **sampling)
