"""The base_model stage: the student's base weights as an asset of their own, upstream of everything that
loads them (the TITO drift tokenizer, training, the student evals, RL).

Offline the base is the tiny student, built from its recipe and its tokenizer corpus (the run's training
requests, the company, the API reference): its directory is named by the digest of all three, so runs that
share them share one build. A hub id or a local path is recorded with the revision this machine has (the
commit of the local Hugging Face cache, or a digest of the directory); a served base by its name and address.
Later stages read the record instead of building, and refuse a record made for another student section.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from env0_posttrain.util.paths import Paths
from env0_posttrain.stages.context import StageContext, StageResult, content_hash
from env0_posttrain.spec.runspec import RunSpec
from env0_posttrain.store import Store

if TYPE_CHECKING:
    from env0_posttrain.tasks.model import Task

TINY_STUDENTS = ("tiny-qwen3", "tiny-qwen3_5")


def student_digest(spec: RunSpec, store: Store, run_id: str) -> str:
    """What the base's weights depend on: the student section (and, for the tiny student, the task set whose
    training requests its corpus reads and the torch thread count it is pre-trained at)."""
    task_set = threads = None
    if spec.student.model in TINY_STUDENTS:
        from env0_posttrain.util.torch_threads import resolve

        task_set = (store.task_set_info(run_id) or {}).get("digest")
        threads = resolve(spec.torch_threads).threads
    return content_hash(spec.student.model_dump(mode="json", exclude={"chat_template", "tokenizer", "device", "report_to"}),
                        spec.hosting.kind, task_set, *([threads] if threads is not None else []))


def tiny_recipe(spec: RunSpec, train_tasks: Sequence[Task]):
    """(corpus, entity tokens, TinyStudentConfig) of the run's tiny student: what its weights are built from."""
    from env0_posttrain.train import TinyStudentConfig
    from env0_posttrain.train.tiny_student.corpus import student_corpus

    corpus, entities = student_corpus(list(train_tasks), spec.student.corpus)
    arch = "qwen3_5_text" if spec.student.model == "tiny-qwen3_5" else "qwen3"
    return corpus, entities, TinyStudentConfig(architecture=arch, pretrain_steps=spec.student.pretrain_steps)


def ensure_base_student(spec: RunSpec, store: Store, run_id: str, paths: Paths) -> Path | str:
    """The student's base weights: the tiny student (shipped for its recipe, or built locally; cached by corpus and
    recipe), or the local path / hub id as given."""
    if spec.student.model not in TINY_STUDENTS:
        return spec.student.model
    from env0_posttrain.tasks.model import Task
    from env0_posttrain.train import ensure_tiny_student

    rows = [j for _, j in store.load_tasks(run_id, "train")]
    if not rows:
        raise RuntimeError(f"run {run_id}: the tiny student reads the training requests; materialize task_set first")
    corpus, entities, config = tiny_recipe(spec, [Task.model_validate_json(j) for j in rows])
    return ensure_tiny_student(paths.models, corpus, entities, config, report_to=spec.student.report_to)


def local_revision(model: str) -> tuple[str, str | None]:
    """(source kind, revision) of a non-tiny base as far as this machine knows it, without the network."""
    path = Path(model)
    if path.is_dir():
        files = sorted((f.relative_to(path).as_posix(), f.stat().st_size) for f in path.rglob("*") if f.is_file())
        config = (path / "config.json").read_text() if (path / "config.json").exists() else ""
        return "path", content_hash(files, config)
    try:
        from huggingface_hub import snapshot_download

        return "hub", Path(snapshot_download(model, local_files_only=True)).name  # the cached commit
    except Exception:  # not in the local cache (or not a hub id): resolved where the model is loaded
        return "hub", None


def build_base_model(ctx: StageContext) -> StageResult:
    spec = ctx.spec
    t0 = time.time()
    digest = student_digest(spec, ctx.store, ctx.run_id)
    info: dict = {}
    curves: Path | None = None
    if spec.hosting.kind == "openai_compatible":
        name = spec.hosting.base_model_name or spec.student.model
        source, path, revision = "served", f"{name}@{spec.hosting.api_base}", None
    elif spec.student.model in TINY_STUDENTS:
        from env0_posttrain.train.tiny_student.build import student_info
        from env0_posttrain.train.tracking.trackers import TENSORBOARD_DIRNAME

        built = Path(ensure_base_student(spec, ctx.store, ctx.run_id, ctx.paths))
        source, path, revision = "tiny", str(built), built.name.rsplit("-", 1)[-1]
        info = {k: v for k, v in student_info(built).items() if isinstance(v, (int, float, str, bool))}
        curves = built / TENSORBOARD_DIRNAME if (built / TENSORBOARD_DIRNAME).is_dir() else None  # student.report_to
    else:
        source, revision = local_revision(spec.student.model)
        path = spec.student.model
    seconds = round(time.time() - t0, 1)
    ctx.store.record_base_model(ctx.run_id, digest, source, path, revision, info | {"seconds": seconds})
    ctx.log.info(f"base_model: {source} {path} (revision {revision or 'unresolved'}) in {seconds} s")
    return StageResult(
        metadata={"student": spec.student.model, "source": source, "path": Path(path) if source == "tiny" else path,
                  "revision": revision or "unresolved", "student_digest": digest, "seconds": seconds, **info,
                  **({"tensorboard": curves} if curves else {})},
        data_version=content_hash(source, path if source != "tiny" else None, revision),
    )


def base_student(spec: RunSpec, store: Store, run_id: str, paths: Paths) -> Path | str:
    """The base weights later stages load: the base_model asset's record (a hub id or path needs no build)."""
    if spec.student.model not in TINY_STUDENTS:
        return spec.student.model
    from env0_posttrain.train.tiny_student.build import MARKER_FILE

    record = store.base_model(run_id)
    if record is None or record["source"] != "tiny":
        raise RuntimeError(f"run {run_id}: no base model recorded for student {spec.student.model!r}; "
                           "materialize base_model first")
    if record["student_digest"] != student_digest(spec, store, run_id):
        raise RuntimeError(f"run {run_id}: the student section or the task set changed since base_model was "
                           "materialized; materialize base_model again")
    path = Path(record["path"])
    if not (path / MARKER_FILE).exists():
        raise RuntimeError(f"run {run_id}: the recorded base model {path} is gone; materialize base_model again")
    return path
