"""Import and export of env0's task directory layout, so tasks can be exchanged with other harnesses.

    <task-id>/
      task.toml            harbor-style config ([metadata], [verifier], [agent]) + [env0] task fields
      instruction.md       the instruction, verbatim
      environment/recipe.json   the initial-state recipe (company seed + planted items)
      solution/oracle.json the oracle tool calls; solution/solve.sh replays them and prints the verdict
      tests/test.sh        replays the agent's recorded calls on a fresh workspace, writes the reward
      tests/expected.json  the expected final answer and the generation-time scores

Import refuses a broken directory with a ``TaskDirError`` naming the file and the problem.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from pydantic import ValidationError

from env0_posttrain.tasks.model import StateRecipe, Task, ToolCall
from env0_posttrain.tasks.template import TEMPLATES
from env0_posttrain.util.fsutil import atomic_write_text

SCHEMA_VERSION = "1.0"
REQUIRED = ("task.toml", "instruction.md", "environment/recipe.json", "solution/oracle.json", "tests/test.sh")

SOLVE_SH = """#!/usr/bin/env bash
# Replays the oracle tool calls on a fresh workspace and prints the verifier's verdict.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
exec "${PYTHON:-python}" -m env0_posttrain.tasks replay "$here" --oracle
"""

TEST_SH = """#!/usr/bin/env bash
# Replays the agent's recorded tool calls (JSON list of {name, arguments}) on a fresh workspace,
# verifies the end state and the final answer, and writes the reward where harbor expects it.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
calls="${ENV0_AGENT_CALLS:-/logs/agent/calls.json}"
answer="${ENV0_FINAL_ANSWER_FILE:-/logs/agent/final_answer.txt}"
reward="${ENV0_REWARD_FILE:-/logs/verifier/reward.txt}"
exec "${PYTHON:-python}" -m env0_posttrain.tasks replay "$here" --calls "$calls" --answer-file "$answer" --reward-file "$reward"
"""


class TaskDirError(ValueError):
    """A task directory that cannot be imported; the message names the file and the problem."""


def _level(difficulty: int) -> str:
    return "easy" if difficulty <= 2 else "medium" if difficulty <= 5 else "hard"


def _write(path: Path, text: str, executable: bool = False) -> None:
    atomic_write_text(path, text, mode=0o755 if executable else None)


def export_task_dir(task: Task, root: Path) -> Path:
    """Write ``root/<task.id>/``; returns the directory. Files are written atomically."""
    out = Path(root) / task.id
    doc = tomlkit.document()
    doc["version"] = SCHEMA_VERSION
    meta = tomlkit.table()
    meta["difficulty"] = _level(task.difficulty)
    meta["category"] = task.family
    meta["tags"] = [task.family, task.template_id]
    doc["metadata"] = meta
    doc["verifier"] = {"timeout_sec": 120.0}
    doc["agent"] = {"timeout_sec": 600.0}
    env0 = tomlkit.table()
    env0["id"] = task.id
    env0["family"] = task.family
    env0["template_id"] = task.template_id
    env0["difficulty"] = task.difficulty
    env0["tools"] = list(task.tools)
    env0["noop_pass"] = task.noop_pass
    doc["env0"] = env0
    _write(out / "instruction.md", task.instruction.rstrip("\n") + "\n")
    _write(out / "environment" / "recipe.json", json.dumps(task.recipe.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    _write(out / "solution" / "oracle.json", json.dumps([c.model_dump(mode="json") for c in task.oracle], indent=2) + "\n")
    _write(out / "solution" / "solve.sh", SOLVE_SH, executable=True)
    expected = {"final_answer": task.final_answer, "oracle_reward": task.oracle_reward, "noop_reward": task.noop_reward}
    _write(out / "tests" / "expected.json", json.dumps(expected, indent=2) + "\n")
    _write(out / "tests" / "test.sh", TEST_SH, executable=True)
    _write(out / "task.toml", tomlkit.dumps(doc))  # last: a directory with task.toml is complete
    return out


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise TaskDirError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as err:
        raise TaskDirError(f"{path}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None


def _field_errors(path: Path, err: ValidationError) -> TaskDirError:
    parts = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in err.errors()]
    return TaskDirError(f"{path}: " + "; ".join(parts))


def import_task_dir(path: Path) -> Task:
    """Read a task directory back into a Task, refusing anything missing, malformed or inconsistent."""
    path = Path(path)
    if not path.is_dir():
        raise TaskDirError(f"{path}: not a directory")
    for rel in REQUIRED:
        if not (path / rel).is_file():
            raise TaskDirError(f"{path / rel}: missing (a task directory needs {', '.join(REQUIRED)})")
    toml_path = path / "task.toml"
    try:
        config = tomllib.loads(_read_text(toml_path))
    except tomllib.TOMLDecodeError as err:
        raise TaskDirError(f"{toml_path}: not valid TOML ({err})") from None
    env0 = config.get("env0")
    if not isinstance(env0, dict):
        raise TaskDirError(f"{toml_path}: missing the [env0] table (id, family, template_id, difficulty, tools)")
    for key in ("id", "family", "template_id", "difficulty", "tools"):
        if key not in env0:
            raise TaskDirError(f"{toml_path}: [env0] lacks the field '{key}'")
    if not isinstance(env0["template_id"], str) or env0["template_id"] not in TEMPLATES:
        raise TaskDirError(f"{toml_path}: [env0] template_id {env0['template_id']!r} is not a known template")
    instruction = _read_text(path / "instruction.md").strip()
    if not instruction:
        raise TaskDirError(f"{path / 'instruction.md'}: empty instruction")
    recipe_path = path / "environment" / "recipe.json"
    try:
        recipe = StateRecipe.model_validate(_read_json(recipe_path))
    except ValidationError as err:
        raise _field_errors(recipe_path, err) from None
    oracle_path = path / "solution" / "oracle.json"
    calls = _read_json(oracle_path)
    if not isinstance(calls, list) or not calls:
        raise TaskDirError(f"{oracle_path}: must be a non-empty JSON list of tool calls")
    try:
        oracle = [ToolCall.model_validate(c) for c in calls]
    except ValidationError as err:
        raise _field_errors(oracle_path, err) from None
    expected_path = path / "tests" / "expected.json"
    expected = _read_json(expected_path) if expected_path.is_file() else {}
    if not isinstance(expected, dict):
        raise TaskDirError(f"{expected_path}: must be a JSON object")
    try:
        task = Task(
            id=env0["id"],
            family=env0["family"],
            template_id=env0["template_id"],
            difficulty=env0["difficulty"],
            instruction=instruction,
            recipe=recipe,
            oracle=oracle,
            final_answer=expected.get("final_answer"),
            tools=env0["tools"],
            oracle_reward=expected.get("oracle_reward"),
            noop_reward=expected.get("noop_reward"),
            noop_pass=env0.get("noop_pass", False),
        )
    except ValidationError as err:
        raise _field_errors(toml_path, err) from None
    if task.difficulty != len(task.oracle):
        raise TaskDirError(f"{toml_path}: difficulty {task.difficulty} but {oracle_path.name} holds {len(task.oracle)} calls")
    if TEMPLATES[task.template_id].family != task.family:
        raise TaskDirError(f"{toml_path}: family {task.family!r} but template {task.template_id} is {TEMPLATES[task.template_id].family!r}")
    return task


def export_task_dirs(tasks: list[Task], root: Path) -> list[Path]:
    return [export_task_dir(t, root) for t in tasks]


def import_task_dirs(root: Path) -> list[Task]:
    """Every task directory directly under ``root`` (those holding a task.toml), sorted by name."""
    return [import_task_dir(p) for p in sorted(Path(root).iterdir()) if (p / "task.toml").is_file()]


def replay_dir(path: Path, calls_path: Path, answer: str | None) -> dict[str, Any]:
    """Build the task's workspace, replay recorded calls, verify: the harbor-side verifier."""
    from env0_posttrain.tasks.generator import build_workspace, verify
    from env0_posttrain.workspace import call_tool

    task = import_task_dir(path)
    raw = _read_json(Path(calls_path))
    if not isinstance(raw, list):
        raise TaskDirError(f"{calls_path}: must be a JSON list of tool calls")
    start, end = build_workspace(task), build_workspace(task)
    try:
        calls = [ToolCall.model_validate(item) for item in raw]
    except ValidationError as err:
        raise _field_errors(Path(calls_path), err) from None
    errors = 0
    for call in calls:
        errors += not call_tool(end, call.name, call.arguments).get("ok")
    result = verify(task, start, end, answer)
    return {"task_id": task.id, "reward": result.reward, "checks": result.checks, "gates": result.gates, "refused_calls": errors}


def write_reward(path: str | os.PathLike[str], reward: float) -> None:
    _write(Path(path), f"{reward}\n")
