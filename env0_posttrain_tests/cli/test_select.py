"""`run materialize --select`: the list form the help shows (`--select a b`), commas and repeats all give the
same selection; an unknown name is refused naming the assets, before anything runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import env0_posttrain.cli.main as cli
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, write_spec

runner = CliRunner()


@pytest.fixture()
def selected(monkeypatch, tmp_path):
    write_spec(RunSpec(run_id="r1"), Paths(tmp_path).runs)  # the spec is checked before the selection
    seen: list = []
    monkeypatch.setattr(cli, "_materialize_and_print", lambda run_id, paths, select, *rest, **kw:
                        seen.append((run_id, select)))
    return seen


@pytest.mark.parametrize("args", [["--select", "task_set", "base_model"], ["--select", "task_set,base_model"],
                                  ["--select", "task_set", "--select", "base_model"],
                                  ["--select", "task_set", "--verbose", "base_model"]])
def test_every_form_of_a_list_selects_the_same_assets(tmp_path, selected, args):
    result = runner.invoke(cli.app, ["run", "materialize", "r1", *args, "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert selected == [("r1", ["task_set", "base_model"])]


def test_no_selection_is_the_whole_graph(tmp_path, selected):
    assert runner.invoke(cli.app, ["run", "materialize", "r1", "--data-dir", str(tmp_path)]).exit_code == 0
    assert selected == [("r1", None)]


@pytest.mark.parametrize("args, words", [(["--select", "task_set", "nope"], ["no asset named ['nope']", "sft_rows"]),
                                         (["stray"], ["unexpected arguments ['stray']"])])
def test_unknown_names_and_stray_words_are_refused_before_anything_runs(tmp_path, selected, args, words):
    result = runner.invoke(cli.app, ["run", "materialize", "r1", *args, "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and all(w in result.output for w in words), result.output
    assert selected == []


def test_an_optional_stage_the_spec_lacks_is_refused_naming_its_section(tmp_path, selected):
    result = runner.invoke(cli.app, ["run", "materialize", "r1", "--select", "sft_rows", "rl_adapter",
                                     "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and selected == []
    assert "rl_adapter does not apply: the run spec has no rl section" in result.output
