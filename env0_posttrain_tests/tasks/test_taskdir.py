"""env0 task directories: export/import round trip, the replay verifier, and refusal of broken directories."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from env0_posttrain.tasks import (
    TEMPLATES, Task, TaskDirError, export_task_dir, export_task_dirs, import_task_dir, import_task_dirs, template_stream,
)
from env0_posttrain.tasks.__main__ import main


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    ids = ["mail_reply_to_person", "calendar_who_is_invited", "auth_offboard_user", "multi_doc_link_email_owner"]
    return [next(template_stream(TEMPLATES[i], 3)) for i in ids]


def test_round_trip_keeps_every_field(tmp_path: Path, tasks: list[Task]) -> None:
    dirs = export_task_dirs(tasks, tmp_path)
    assert [d.name for d in dirs] == [t.id for t in tasks]
    for d in dirs:
        for rel in ("task.toml", "instruction.md", "environment/recipe.json", "solution/oracle.json",
                    "solution/solve.sh", "tests/test.sh", "tests/expected.json"):
            assert (d / rel).is_file(), rel
    back = import_task_dirs(tmp_path)
    assert [t.model_dump() for t in back] == [t.model_dump() for t in sorted(tasks, key=lambda t: t.id)]
    assert all(t.content_digest() == u.content_digest() for t, u in zip(back, sorted(tasks, key=lambda t: t.id)))


def test_replay_verifier_scores_oracle_and_agent_calls(tmp_path: Path, tasks: list[Task], capsys: pytest.CaptureFixture) -> None:
    d = export_task_dir(tasks[0], tmp_path)
    assert main(["replay", str(d), "--oracle"]) == 0
    assert json.loads(capsys.readouterr().out)["reward"] == 1.0
    empty = tmp_path / "calls.json"
    empty.write_text("[]")
    reward_file = tmp_path / "logs" / "reward.txt"
    assert main(["replay", str(d), "--calls", str(empty), "--reward-file", str(reward_file)]) == 0
    assert float(reward_file.read_text()) < 1.0


def _broken(tmp_path: Path, task: Task) -> Path:
    src = export_task_dir(task, tmp_path / "src")
    dst = tmp_path / "broken"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


@pytest.mark.parametrize(
    "breakage, file, problem",
    [
        (lambda d: (d / "instruction.md").unlink(), "instruction.md", "missing"),
        (lambda d: (d / "instruction.md").write_text("  \n"), "instruction.md", "empty instruction"),
        (lambda d: (d / "task.toml").write_text("version = \n"), "task.toml", "not valid TOML"),
        (lambda d: (d / "task.toml").write_text('version = "1.0"\n'), "task.toml", "[env0]"),
        (lambda d: (d / "solution" / "oracle.json").write_text("[{"), "oracle.json", "not valid JSON"),
        (lambda d: (d / "solution" / "oracle.json").write_text('[{"nom": "x"}]'), "oracle.json", "name"),
        (lambda d: (d / "environment" / "recipe.json").write_text('{"items": {}}'), "recipe.json", "seed"),
        (lambda d: (d / "task.toml").write_text((d / "task.toml").read_text().replace("template_id = \"", "template_id = \"zz")),
         "task.toml", "not a known template"),
        (lambda d: (d / "task.toml").write_text(re.sub(r"(?m)^difficulty = (\d+)$", r"difficulty = 9\1",
                                                       (d / "task.toml").read_text())), "task.toml", "difficulty 9"),
    ],
)
def test_broken_directory_is_refused_naming_file_and_problem(tmp_path: Path, tasks: list[Task], breakage, file: str,
                                                             problem: str) -> None:
    d = _broken(tmp_path, tasks[0])
    breakage(d)
    with pytest.raises(TaskDirError) as err:
        import_task_dir(d)
    assert file in str(err.value) and problem in str(err.value), str(err.value)
