"""Bad inputs found by the reliability probe: binary or mis-encoded files and wrong-typed fields are
refused with an error naming the file (and field), never a bare UnicodeDecodeError or TypeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.sensors import scan_specs
from env0_posttrain.runspec import SpecError, load_spec
from env0_posttrain.tasks.taskdir import TaskDirError, export_task_dir, import_task_dir
from env0_posttrain.tasks import TEMPLATES, template_stream

BINARY = b"\xff\xfe\x00run_id: x\n"


def test_a_binary_spec_file_is_refused_naming_it_and_the_sensor_keeps_scanning(tmp_path: Path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "bad.yaml").write_bytes(BINARY)
    (runs / "good.yaml").write_text("run_id: good\n")
    with pytest.raises(SpecError, match=r"bad\.yaml: not UTF-8"):
        load_spec(runs / "bad.yaml")
    ids, errors = scan_specs(Env0Resource(data_dir=str(tmp_path)))
    assert ids == ["good"] and len(errors) == 1 and "bad.yaml" in errors[0]


@pytest.fixture(scope="module")
def task():
    return next(template_stream(TEMPLATES["mail_reply_to_person"], 3))


@pytest.mark.parametrize("rel", ["instruction.md", "task.toml", "solution/oracle.json", "environment/recipe.json"])
def test_a_mis_encoded_task_file_is_refused_naming_it(tmp_path: Path, task, rel: str):
    d = export_task_dir(task, tmp_path)
    (d / rel).write_bytes(BINARY)
    with pytest.raises(TaskDirError) as err:
        import_task_dir(d)
    assert rel.split("/")[-1] in str(err.value) and "not UTF-8" in str(err.value)


def test_a_task_whose_template_id_is_not_a_string_is_refused(tmp_path: Path, task):
    d = export_task_dir(task, tmp_path)
    toml = d / "task.toml"
    toml.write_text(toml.read_text().replace(f'template_id = "{task.template_id}"', 'template_id = ["a", "b"]'))
    with pytest.raises(TaskDirError, match=r"task\.toml.*template_id"):
        import_task_dir(d)
