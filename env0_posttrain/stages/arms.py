"""Which model plays which arm of a run: one place that maps a RunSpec to harness endpoints.

Base and adapter share everything but the adapter (same harness, same decoding, same limits);
the teacher differs only by its model and its teacher-only steering prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model
from env0_posttrain.util.paths import Paths
from env0_posttrain.stages.base_model import TINY_STUDENTS, base_student
from env0_posttrain.spec.runspec import RunSpec
from env0_posttrain.store import Store

log = logging.getLogger("env0_posttrain")


def rollout_settings(spec: RunSpec, arm: str) -> AgentSettings:
    if arm in ("teacher", "teacher_eval"):
        return AgentSettings.for_teacher(spec.teacher, max_steps=spec.teacher_limits()[0], shell=spec.shell,
                                         scale=spec.scale)
    return AgentSettings.for_eval(spec.eval, max_steps=spec.eval_limits()[0], shell=spec.shell, scale=spec.scale)


# Concurrent episodes' model calls batched into one generate: a GPU's decode step costs about the same for 64 rows as
# for 16; on CPU 16 keeps the digits the demo always had.
CPU_BATCH, CUDA_BATCH = 16, 64


def student_device(spec: RunSpec) -> str:
    """Where the local student runs in this process ('cuda' / 'cpu'): the spec's `student.device`, resolved."""
    from env0_posttrain.util.devices import resolve_device

    return resolve_device(spec.student.device)


STUDENT_TEACHER = "env0-local/student"  # teacher.model for the run's own base student, served in-process


def teacher_endpoint(spec: RunSpec, build_base: Callable[[], Path | str] | None = None,
                     run_id: str = "") -> ModelEndpoint:
    """The teacher through litellm (the offline oracle gets each episode's task with the call).

    `env0-local/student` is the run's base student (a token-id-returning teacher without a server:
    a pipeline check of native TITO capture); `build_base` finds it."""
    endpoint = ModelEndpoint.from_teacher(spec.teacher, seed=spec.tasks.seed)
    endpoint = endpoint.model_copy(update={"max_tokens": spec.teacher_limits()[1]})
    if spec.teacher.model == STUDENT_TEACHER:
        if build_base is None:
            raise ValueError(f"teacher.model {STUDENT_TEACHER}: this caller cannot build the run's base student")
        endpoint = endpoint.model_copy(update={"model": register_local_model(
            f"{run_id}-student-teacher", build_base(), device=student_device(spec))})
    capture = token_capture_kwargs(spec)
    return endpoint.model_copy(update={"extra": {**endpoint.extra, **capture}}) if capture else endpoint


def token_capture_kwargs(spec: RunSpec) -> dict:
    """TITO rows from a vLLM teacher need its ids, which vLLM's OpenAI server returns only when the request
    says `return_token_ids` (top-level `prompt_token_ids`, per-choice `token_ids`); litellm forwards `extra_body`."""
    wants_ids = spec.sft.format == "tito" and spec.sft.tito_source != "retokenise"
    if wants_ids and spec.teacher.model.startswith("hosted_vllm/"):
        return {"extra_body": {"return_token_ids": True}}
    return {}


def student_tokenizer_source(spec: RunSpec, store: Store, run_id: str, paths: Paths) -> Path | str:
    """Where the student's tokenizer comes from: the student itself, never a model built only for it.

    A declared `student.tokenizer` wins; a hub id or path student is its own source; a hosted student
    declares its tokenizer by its served base name. Only when the tiny student is the student (local
    hosting) is the tiny model's tokenizer used (the base_model asset built it), because then it is the student's.
    """
    if spec.student.tokenizer:
        return spec.student.tokenizer
    if spec.student.model not in TINY_STUDENTS:
        return spec.student.model
    if spec.hosting.kind != "local":
        if not spec.hosting.base_model_name:
            raise ValueError(f"run {run_id}: a hosted student needs student.tokenizer (hub id or local path) or "
                             "hosting.base_model_name to load its tokenizer from")
        return spec.hosting.base_model_name
    return base_student(spec, store, run_id, paths)


def load_student_tokenizer(spec: RunSpec, store: Store, run_id: str, paths: Paths):
    """The student's tokenizer; a source that does not load is named with the setting that chose it."""
    from transformers import AutoTokenizer

    source = student_tokenizer_source(spec, store, run_id, paths)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(source))
    except (OSError, ValueError) as err:
        raise RuntimeError(f"run {run_id}: cannot load the student's tokenizer from {str(source)!r} "
                           f"(student.tokenizer / student.model / hosting.base_model_name): {err}") from err
    if spec.student.chat_template:
        tokenizer.chat_template = Path(spec.student.chat_template).read_text()
    return tokenizer


def arm_endpoint(spec: RunSpec, arm: str, store: Store, run_id: str, paths: Paths) -> ModelEndpoint:
    if arm == "teacher_eval":
        return teacher_endpoint(spec, lambda: base_student(spec, store, run_id, paths), run_id)
    sampling = {"temperature": spec.eval.temperature, "max_tokens": spec.eval_limits()[1]}
    training = store.latest_training(run_id) if arm == "sft" else None
    if arm == "sft" and training is None:
        raise RuntimeError(f"run {run_id}: no finished training; materialize lora_adapter first")
    if arm == "rl":  # the GRPO adapter is stored under <run_id>:rl (see stages/rl.py)
        training = store.latest_training(f"{run_id}:rl")
        if training is None:
            raise RuntimeError(f"run {run_id}: no finished RL training; materialize rl_adapter first")
    if arm == "onpolicy":  # the on-policy adapter: <run_id>:onpolicy (stages/onpolicy_adapter.py)
        training = store.latest_training(f"{run_id}:onpolicy")
        if training is None:
            raise RuntimeError(f"run {run_id}: no finished on-policy training; materialize onpolicy_adapter first")
    if spec.hosting.kind == "openai_compatible":
        from env0_posttrain.train import adapter_serving_name

        name = spec.hosting.base_model_name or spec.student.model
        if arm in ("sft", "rl", "onpolicy"):
            name = adapter_serving_name(spec.hosting.adapter_name_prefix, training["revision"])
        return ModelEndpoint(model=f"hosted_vllm/{name}", api_base=spec.hosting.api_base,
                             api_key_env=spec.hosting.api_key_env, **sampling)
    base = base_student(spec, store, run_id, paths)
    device = student_device(spec)
    batching = {"device": device, "max_batch_size": CUDA_BATCH if device == "cuda" else CPU_BATCH,
                "repetition_window": spec.eval.repetition_window}
    if arm == "base":
        model_id = register_local_model(f"{run_id}-base", base, **batching)
    else:
        model_id = register_local_model(f"{run_id}-{arm}-{training['revision']}", base, adapter_path=training["adapter_path"],
                                        **batching)
    return ModelEndpoint(model=model_id, **sampling)


def base_student_identity(spec: RunSpec, store: Store, run_id: str, paths: Paths, endpoint: ModelEndpoint) -> str:
    """What names the base student's weights: the served model and address, or the local path / hub id
    (a tiny student's directory name is the digest of its corpus and config), with the in-process decoder's
    repetition cut where one is set (it changes the replies)."""
    if spec.hosting.kind == "openai_compatible":
        return f"{endpoint.model}@{endpoint.api_base}"
    path = str(base_student(spec, store, run_id, paths))
    window = spec.eval.repetition_window
    return path if window is None else f"{path} repetition_window={window}"
