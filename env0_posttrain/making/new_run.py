"""Making runs: a new spec from a preset, a teacher, a student and `section.field=value` overrides, and the specs a
teacher backfill clones from a run. One code path for `run new` / `backfill` on the command line and the UI's
`new_run` / `teacher_backfill` jobs (defs/jobs.py), so a spec is checked the same way wherever it is written.

Everything is checked before anything is written: the spec's fields (pydantic, with a "did you mean" for a
misspelt field), the package folders it names, and the teacher's model id through litellm (an id litellm cannot
route is refused naming `teacher.model`; a key variable that is not set is a warning naming
`teacher.api_key_env`). Registering the partition is the caller's: the CLI has its instance, a job its context.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from env0_posttrain.spec.runspec import RunSpec, SpecError, load_spec, parse_spec, run_id_problem, write_spec
from env0_posttrain.util.digests import sha256_hex
from env0_posttrain.util.paths import Paths

MAX_RUN_ID = 128
BACKFILL_TAG = "env0/backfill"
SOURCE_TAG = "env0/from_run"  # on a teacher backfill's runs: the run its specs were cloned from


class BackfillError(ValueError):
    """A teacher backfill that cannot be launched; nothing was written or launched."""


@dataclass(frozen=True)
class NewRun:
    spec: RunSpec
    path: Path
    warnings: list[str] = field(default_factory=list)


def apply_overrides(data: dict, sets: Sequence[str]) -> dict:
    """`lora.r=16`: dotted path = YAML value, so types come out as YAML would read them."""
    for item in sets:
        if "=" not in item:
            raise SpecError(f"--set {item!r}: expected section.field=value")
        key, raw = item.split("=", 1)
        node = data
        parts = key.strip().split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise SpecError(f"--set {item!r}: '{p}' is not a section")
        try:
            node[parts[-1]] = yaml.safe_load(raw)
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            raise SpecError(f"--set {item!r}: the value is not valid YAML ({problem}); quote it, e.g. "
                            f"--set '{key}=\"...\"'") from None
    return data


def teacher_problems(spec: RunSpec) -> tuple[list[str], list[str]]:
    """(errors, warnings) about the teacher's model id and key, each naming its spec field."""
    from env0_posttrain.agent.model_check import check_model

    t = spec.teacher
    issues = check_model(t.model, t.api_base, t.api_key_env)
    errors = [f"teacher.{i.field}: {i.message}" for i in issues if i.fatal]
    return errors, [f"teacher.{i.field}: {i.message}" for i in issues if not i.fatal]


def spec_problems(spec: RunSpec) -> tuple[list[str], list[str]]:
    """(errors, warnings) beyond the spec's own validation: package folders that are not there, a sandbox this
    machine cannot make for the packages or the shell surface, the teacher. Each
    starts with the field it is about (`teacher.model: ...`)."""
    from env0_posttrain.sandbox.needs import sandbox_refusals
    from env0_posttrain.spec.suites import missing_folders

    errors, warnings = teacher_problems(spec)
    return missing_folders(spec) + sandbox_refusals(spec) + errors, warnings


def check_spec_file(path: Path) -> RunSpec:
    """A spec file as `run new` would have written it: valid, and runnable (spec_problems' errors); a SpecError
    naming the file, the line and the field otherwise (the spec sensor's check of data/runs/)."""
    from env0_posttrain.util.source_lines import yaml_line

    spec = load_spec(path)
    errors, _ = spec_problems(spec)
    if errors:
        text = path.read_text(encoding="utf-8")
        located = []
        for e in errors:
            field, _, why = e.partition(": ")
            line = yaml_line(text, tuple(field.split(".")))
            located.append(f"{field}{f' (line {line})' if line else ''}: {why}")
        raise _refuse(str(path), located)
    return spec


def _refuse(source: str, errors: list[str]) -> SpecError:
    if len(errors) == 1:
        return SpecError(f"{source}: {errors[0]}")
    return SpecError("\n  - ".join([f"{source}: the spec cannot run", *errors]))


def build_spec(run_id: str, preset: str = "demo", teacher: str | None = None, student: str | None = None,
               sets: Sequence[str] = ()) -> tuple[RunSpec, list[str]]:
    """The checked spec of a new run and its warnings; a SpecError naming the field when it cannot run."""
    from env0_posttrain.making.presets import preset_data

    if problem := run_id_problem(run_id):
        raise SpecError(problem)
    try:
        data = preset_data(preset, run_id)
    except KeyError as err:
        raise SpecError(str(err.args[0])) from None
    if teacher is not None:
        data.setdefault("teacher", {})["model"] = teacher
    if student is not None:
        data.setdefault("student", {})["model"] = student
    spec = parse_spec(apply_overrides(data, sets), f"run {run_id!r}")
    errors, warnings = spec_problems(spec)
    if errors:
        raise _refuse(f"run {run_id!r}", errors)
    return spec, warnings


def built_assets(paths: Paths, spec: RunSpec) -> list[str]:
    """What the store holds for a run whose spec file differs from `spec` (nothing when the spec is the same)."""
    from env0_posttrain.store import Store

    path = paths.spec(spec.run_id)
    if not path.is_file() or not paths.db.is_file():
        return []
    try:
        if load_spec(path) == spec:
            return []
    except SpecError:
        pass
    counts = Store(paths.db).built_counts(spec.run_id)
    names = {"task_sets": "a task set", "rounds": "eval or teacher rounds", "training_runs": "training runs"}
    return [names[table] for table, n in counts.items() if n]


def make_run(paths: Paths, run_id: str, *, preset: str = "demo", teacher: str | None = None,
             student: str | None = None, sets: Sequence[str] = (), force: bool = False,
             register: Callable[[str], object] = lambda run_id: None) -> NewRun:
    """Check, write data/runs/RUN_ID.yaml, record it in the store and `register` its partition. A SpecError (one
    line naming the field) and nothing written when the spec cannot run or would replace a built run's spec."""
    from env0_posttrain.store import Store

    spec, warnings = build_spec(run_id, preset, teacher, student, sets)
    if not force and (built := built_assets(paths, spec)):
        raise SpecError(f"run {run_id!r} already has a different spec and built {', '.join(built)}; a new spec would "
                        "leave them describing another run: pick a new run id, or force it (--force; the new_run "
                        "job's `force: true`)")
    path = write_spec(spec, paths.runs)
    Store(paths.db).upsert_run(spec)
    register(spec.run_id)
    return NewRun(spec, path, warnings)


# ---- teacher backfills: one cloned spec per new teacher --------------------------------------------------------

def teacher_slug(model: str) -> str:
    """'openrouter/qwen/qwen3:free' -> 'openrouter-qwen-qwen3-free': only Dagster-safe key characters."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")
    slug = re.sub(r"\.{2,}", ".", slug)  # '...' is Dagster's range syntax
    if not slug:
        raise BackfillError(f"teacher {model!r} has no characters usable in a run id")
    return slug


def teacher_run_id(source_run_id: str, model: str) -> str:
    """Deterministic: re-running a backfill for the same teacher targets the same partition."""
    run_id = f"{source_run_id}--{teacher_slug(model)}"
    if len(run_id) > MAX_RUN_ID:
        digest = sha256_hex(model, n=8)
        run_id = f"{run_id[: MAX_RUN_ID - 9]}-{digest}"
    return run_id


def clone_for_teacher(source: RunSpec, model: str, nightly: bool = False) -> RunSpec:
    """The source's spec with another teacher. A clone joins the nightly evals only when asked (`nightly`): its
    source's eval.nightly and suites' nightly flags are cleared otherwise. Asked, it plays its source's nightly
    suites, or its eval split when the source has none (a source that is not nightly itself); refused when there
    is nothing to play nightly."""
    data = source.model_dump(mode="json")
    data["run_id"] = teacher_run_id(source.run_id, model)
    data["teacher"]["model"] = model
    if (m := re.search(r"env0-oracle/[^/@]*@([0-9.]+)$", model)) is not None:  # the id's skill is the one that acts
        data["teacher"]["skill"] = float(m.group(1))
    data["description"] = f"teacher backfill of {source.run_id} with {model}"
    if not nightly:
        data["eval"]["nightly"] = False
        for suite in data["suites"]:
            suite["nightly"] = False
    elif not (source.eval.nightly or any(s.nightly for s in source.suites)):
        if not source.tasks.n_eval:
            raise BackfillError(f"nightly: run {source.run_id!r} has no eval split (tasks.n_eval: 0) and no suite "
                                "marked nightly: true, so its clones would have nothing to play each night; mark a "
                                "suite nightly in its spec, or leave nightly off")
        data["eval"]["nightly"] = True  # the source is not nightly itself: its clones play its eval split
    try:
        return RunSpec.model_validate(data)
    except Exception as err:  # pydantic names the field
        raise BackfillError(f"cloning {source.run_id} for teacher {model!r}: {err}") from None


def load_source(paths: Paths, run_id: str) -> RunSpec:
    if problem := run_id_problem(run_id):
        raise BackfillError(problem)
    path = paths.spec(run_id)
    if path.exists():
        return load_spec(path)
    from env0_posttrain.store import Store

    if paths.db.exists():
        spec = Store(paths.db).get_run(run_id)
        if spec is not None:
            return spec
    raise BackfillError(f"source run {run_id!r}: no spec file {path} and no row in {paths.db}")


def plan_clones(paths: Paths, source: RunSpec, teachers: Sequence[str], nightly: bool = False
                ) -> tuple[list[RunSpec], list[str]]:
    """(the clones, warnings), everything checked before anything is written: each teacher through litellm,
    duplicates, collisions with different specs."""
    if isinstance(teachers, str):
        raise BackfillError(f"teachers must be a list of model ids, got the string {teachers!r}")
    if not teachers:
        raise BackfillError("name at least one teacher")
    clones: dict[str, RunSpec] = {}
    warnings: list[str] = []
    for model in dict.fromkeys(teachers):  # keep order, drop exact repeats
        clone = clone_for_teacher(source, model, nightly)
        errors, warned = teacher_problems(clone)
        if errors:
            raise BackfillError(f"teacher {model!r}: " + "; ".join(errors))
        warnings += [f"teacher {model!r}: {w}" for w in warned]
        if clone.run_id in clones:
            raise BackfillError(
                f"teachers {clones[clone.run_id].teacher.model!r} and {model!r} both map to run id {clone.run_id!r}"
            )
        existing = paths.spec(clone.run_id)
        if existing.exists():
            try:
                same = load_spec(existing).digest() == clone.digest()
            except SpecError:
                same = False
            if not same:
                raise BackfillError(f"{existing} already exists with a different spec; remove it or pick another source")
        clones[clone.run_id] = clone
    return list(clones.values()), warnings


def write_clones(paths: Paths, clones: Sequence[RunSpec]) -> list[Path]:
    from env0_posttrain.store import Store

    spec_paths = [write_spec(c, paths.runs) for c in clones]
    store = Store(paths.db)
    for c in clones:
        store.upsert_run(c)
    return spec_paths


def backfill_labels(source: RunSpec, clones: Sequence[RunSpec]) -> tuple[dict[str, str], str, str]:
    """(tags, title, description) of a teacher backfill, as the UI's Backfills page lists it."""
    tags = {BACKFILL_TAG: "teachers", SOURCE_TAG: source.run_id}
    return tags, f"teachers from {source.run_id}"[:100], "; ".join(f"{c.run_id}: {c.teacher.model}" for c in clones)[:2000]
