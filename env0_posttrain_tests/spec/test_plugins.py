"""The spec reads what the layers above it register (spec/plugins.py) from this checkout's pyproject.toml and the
installed metadata, so `tasks.families` is checked against the tasks' own names without the spec importing them."""

from __future__ import annotations

from pathlib import Path

import pytest

from env0_posttrain.spec import plugins
from env0_posttrain.spec.runspec import RunSpec, SpecError, parse_spec, task_families
from env0_posttrain.tasks.families.names import FAMILIES


def test_the_family_names_are_the_tasks_own_read_through_the_checkouts_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(plugins, "installed", lambda group: {})  # an install made before the line: the checkout's
    assert plugins.declared(plugins.TASK_FAMILIES) == {"names": "env0_posttrain.tasks.families.names:FAMILIES"}
    assert task_families() == FAMILIES
    assert RunSpec(run_id="r").tasks.families == list(FAMILIES)


def test_an_unknown_family_is_refused_naming_the_file_the_field_and_the_known_ones():
    with pytest.raises(SpecError, match=r"s\.yaml: invalid run spec: tasks\.families: .*\['fax'\]; known: \['auth'"):
        parse_spec({"run_id": "r", "tasks": {"families": ["mail", "fax"]}}, source="s.yaml")


def test_a_family_line_that_names_no_tuple_of_names_is_refused(monkeypatch: pytest.MonkeyPatch):
    plugins.add(plugins.TASK_FAMILIES, "bad", "env0_posttrain.tasks.families.names:Family")
    try:
        with pytest.raises(ValueError, match="task_families: bad must name a tuple of family names"):
            parse_spec({"run_id": "r"}, source="s.yaml")
    finally:
        plugins.remove(plugins.TASK_FAMILIES, "bad")


def test_a_pyproject_entry_point_table_is_read_and_a_bad_value_refused(tmp_path: Path):
    good = tmp_path / "good.toml"
    good.write_text('[project.entry-points."g"]\nx = "m:X"\n[project.entry-points."h"]\ny = "n:Y"\n')
    assert plugins.in_checkout("g", good) == {"x": "m:X"} and plugins.in_checkout("z", good) == {}
    assert plugins.in_checkout("g", tmp_path / "absent.toml") == {}  # an installed wheel: no checkout
    bad = tmp_path / "bad.toml"
    bad.write_text('[project.entry-points."g"]\nx = 1\n')
    with pytest.raises(ValueError, match=r"bad\.toml: \[project\.entry-points\.'g'\]"):
        plugins.in_checkout("g", bad)
