"""Bad run specs and env0 package metadata: the error names the file, the line and the field, and
nothing already stored changes (the reliability probe's second pass, #19 point 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, SpecError, load_spec, write_spec
from env0_posttrain.util.source_lines import toml_line, yaml_line
from env0_posttrain.stages.context import StageContext
from env0_posttrain.store import Store
from env0_posttrain.tasks.env0.package.load import Env0Error, load_package
from env0_posttrain_tests.store.test_store import _ep
from env0_posttrain_tests.support.paths import FIXTURES


def test_lines_are_found_for_nested_keys_list_items_and_dotted_toml_keys():
    text = "run_id: x\nlora:\n  r: 8\n  rank: 4\ntasks:\n  families:\n    - mail\n    - fax\n"
    assert yaml_line(text, ("lora", "rank")) == 4
    assert yaml_line(text, ("tasks", "families", 1)) == 8
    assert yaml_line(text, ("lora", "alpha")) == 2  # a missing key: its table's line
    assert yaml_line(text, ("nowhere",)) is None
    toml = 'name = "a"\n[agent]\ntimeout_sec = 1\n[verifier.env]\nX = "1"\n[environment]\nsvc.kind = "x"\n'
    assert toml_line(toml, ("agent", "timeout_sec")) == 3
    assert toml_line(toml, ("verifier", "env", "X")) == 5
    assert toml_line(toml, ("environment", "svc", "kind")) == 7
    assert toml_line(toml, ("environment", "services")) == 6
    assert toml_line(toml, ("task",)) is None


def test_a_bad_spec_field_is_named_with_its_line(tmp_path: Path):
    path = tmp_path / "exp.yaml"
    path.write_text("run_id: exp\nteacher:\n  model: ''\nlora:\n  r: 8\n  rank: 4\ntasks:\n  families: [mail, fax]\n")
    with pytest.raises(SpecError) as err:
        load_spec(path)
    msg = str(err.value)
    assert str(path) in msg
    for line in ("teacher.model (line 3)", "lora.rank (line 6)", "tasks.families (line 8)"):
        assert line in msg


def test_a_spec_broken_after_its_run_started_changes_nothing_stored(tmp_path: Path):
    paths = Paths(tmp_path)
    write_spec(RunSpec(run_id="exp"), paths.runs)
    ctx = StageContext.load("exp", paths)
    rid = ctx.store.open_round("exp", "teacher", "m", 2)
    ctx.store.write_episode(rid, _ep("t1", 0, 1.0).model_copy(update={"run_id": "exp"}))
    before = ctx.store.query("SELECT spec_json, digest, updated_at FROM runs")
    (paths.runs / "exp.yaml").write_text("run_id: exp\nlora:\n  r: lots\n")  # a user's bad edit
    with pytest.raises(SpecError, match=r"exp\.yaml: invalid run spec: lora\.r \(line 3\)"):
        StageContext.load("exp", paths)
    store = Store(paths.db)
    assert store.query("SELECT spec_json, digest, updated_at FROM runs") == before
    assert store.done_keys(rid) == {("t1", 0)}


def _with(pkg: Path, old: str, new: str) -> None:
    toml = pkg / "task.toml"
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new))


BAD_META = {  # how the package is broken -> (the file, the text the error must hold)
    "timeout is a word": (lambda p: _with(p, "[verifier]\ntimeout_sec = 60", '[verifier]\ntimeout_sec = "soon"'),
                          "task.toml", "line 11, field verifier.timeout_sec"),
    "timeout is negative": (lambda p: _with(p, "[agent]\ntimeout_sec = 120", "[agent]\ntimeout_sec = -1"),
                            "task.toml", "line 8, field agent.timeout_sec"),
    "services is a string": (lambda p: _with(p, 'services = ["mock-gmail", "mock-slack"]', 'services = "mock-gmail"'),
                             "task.toml", "line 14, field environment.services"),
    "task is not a table": (lambda p: (p / "task.toml").write_text('task = "x"\n' + (p / "task.toml").read_text()),
                            "task.toml", "line 1, field task"),
    "task.toml is binary": (lambda p: (p / "task.toml").write_bytes(b"\xff\xfe\x00x"), "task.toml", "not UTF-8"),
    "instruction is binary": (lambda p: (p / "instruction.md").write_bytes(b"\xff\xfe\x00x"), "instruction.md",
                              "not UTF-8"),
    "task.md front matter": (lambda p: ((p / "task.toml").unlink(), (p / "task.md").write_text(
        "---\nagent:\n  timeout_sec: []\n---\n## prompt\nDo it.\n")), "task.md", "line 3, field agent.timeout_sec"),
}


@pytest.mark.parametrize("case", sorted(BAD_META))
def test_bad_env0_metadata_is_an_env0_error_naming_file_line_and_field(tmp_path: Path, case: str):
    pkg = tmp_path / "pkg"
    shutil.copytree(FIXTURES / "env0_invoice", pkg)
    breakage, file, text = BAD_META[case]
    breakage(pkg)
    with pytest.raises(Env0Error) as err:
        load_package(pkg)
    assert err.value.path.endswith(file) and text in str(err.value)


@pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None,
                    reason="env0 packages' scripts need bash and curl")
def test_a_corpus_with_one_bad_package_drops_it_by_name_and_keeps_the_rest(tmp_path: Path):
    """Before the metadata contract a wrong-typed task.toml field raised AttributeError/ValueError,
    which the corpus import does not catch: one bad package failed the whole task set."""
    from env0_posttrain.spec.runspec import TaskSelection
    from env0_posttrain.tasks import make_task_set

    src = tmp_path / "corpus"
    for i in (1, 2):
        shutil.copytree(FIXTURES / "env0_invoice", src / f"invoice-{i}")
        (src / f"invoice-{i}" / "instruction.md").write_text(f"Email the invoice total (batch {i}).\n")
    shutil.copytree(FIXTURES / "env0_invoice", src / "broken")
    (src / "broken" / "task.toml").write_text('environment = 3\n')
    ts = make_task_set(TaskSelection(source=src, n_train=1, n_eval=1, seed=0), env0_root=FIXTURES / "env0_root")
    assert sorted(t.recipe.items["package"] for t in ts.tasks) == ["invoice-1", "invoice-2"]
    assert "line 1, field environment" in ts.dropped["broken"] and "task.toml" in ts.dropped["broken"]


def test_a_replace_that_fails_midway_leaves_the_stored_rows_whole(tmp_path: Path):
    """SFT rows and task sets are replaced in one transaction: a row that cannot be stored (here one
    that is not JSON) rolls the delete back, so the run keeps its previous rows, not none or half."""
    from env0_posttrain.tasks import TEMPLATES, template_stream

    store = Store(tmp_path / "db.duckdb")
    store.replace_sft_rows("r", [("a", 1.0, {"messages": [1]}), ("b", 0.5, {"messages": [2]})], "round-1")
    with pytest.raises(TypeError):
        store.replace_sft_rows("r", [("c", 1.0, {"messages": [3]}), ("d", 1.0, {"messages": {object()}})], "round-2")
    assert store.load_sft_rows("r") == [{"messages": [1]}, {"messages": [2]}]

    task = next(template_stream(TEMPLATES["mail_reply_to_person"], 3))
    store.replace_task_set("r", "d1", {}, [], [("train", task)])

    class Unstorable:
        id = "x"

    with pytest.raises(AttributeError):
        store.replace_task_set("r", "d2", {}, [], [("train", task), ("eval", Unstorable())])
    assert store.task_set_info("r")["digest"] == "d1" and store.task_splits("r") == {task.id: "train"}
