"""A hostile package's own tree (package/files.py): links out of it, self-loops, fifos and endless folders are refused
at import with one line naming the entry, through the CLI (exit 2, and the reward file the docs promise) and the
corpus import (dropped, with the reason); nothing of the host is read, hashed or copied into a sandbox; a package
that turns hostile after its import fails its episodes as verifier errors, stored and counted."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from env0_posttrain.tasks.env0.package.load import Env0Error, load_package
from env0_posttrain.tasks.env0.package.files import MAX_DEPTH, package_sha256
from env0_posttrain.util.tree_removal import remove_tree
from env0_posttrain_tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "env0_invoice"


@pytest.fixture()
def secret(tmp_path):
    """A host file and folder no package may carry."""
    value = f"host-secret-{uuid.uuid4().hex}"
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "secret.txt").write_text(value)
    return folder, value


def _pkg(tmp_path: Path) -> Path:
    pkg = tmp_path / "corpus" / f"pkg-{uuid.uuid4().hex[:6]}"
    shutil.copytree(FIXTURE, pkg)
    return pkg


def _deep(top: Path, levels: int) -> None:
    fd = os.open(top, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)


HOSTILE = {
    "a file link in solution/": lambda p, host: (p / "solution" / "notes.txt").symlink_to(host / "secret.txt"),
    "a folder link in tests/": lambda p, host: (p / "tests" / "fixtures").symlink_to(host),
    "instruction.md as a link": lambda p, host: ((p / "instruction.md").unlink(),
                                                 (p / "instruction.md").symlink_to(host / "secret.txt")),
    "a relative link climbing out": lambda p, host: (p / "data" / "up").symlink_to(os.path.relpath(host, p / "data")),
    "a self-loop": lambda p, host: (p / "solution" / "loop").symlink_to("loop"),
    "a dangling link": lambda p, host: (p / "tests" / "gone").symlink_to(p / "nowhere"),
    "a fifo": lambda p, host: os.mkfifo(p / "data" / "pipe"),
    "folders 1,200 deep": lambda p, host: _deep(p / "data", 1200),
}
WHAT = {"a file link in solution/": ("solution/notes.txt", "leaves the package"),
        "a folder link in tests/": ("tests/fixtures", "leaves the package"),
        "instruction.md as a link": ("instruction.md", "leaves the package"),
        "a relative link climbing out": ("data/up", "leaves the package"),
        "a self-loop": ("solution/loop", "cannot be followed"),
        "a dangling link": ("tests/gone", "cannot be followed"),
        "a fifo": ("data/pipe", "neither a file, a folder nor a link"),
        "folders 1,200 deep": ("data/", f"more than {MAX_DEPTH} deep")}


@pytest.fixture()
def packages(tmp_path):
    """Packages made for the test, removed after it by the teardown's own removal: pytest's clean-up of old temporary
    folders (shutil.rmtree) would raise RecursionError on a tree 1,200 deep, in whichever session meets it."""
    made: list[Path] = []
    yield lambda: made.append(_pkg(tmp_path)) or made[-1]
    for pkg in made:
        assert remove_tree(pkg) == []


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_package_tree_is_refused_in_one_line_naming_the_entry(kind, tmp_path, secret, packages):
    host, value = secret
    pkg = packages()
    HOSTILE[kind](pkg, host)
    entry, why = WHAT[kind]
    with pytest.raises(Env0Error) as err:
        load_package(pkg)
    msg = str(err.value)
    assert msg.startswith("read package: ") and entry in msg and why in msg and "\n" not in msg, msg
    assert value not in msg
    with pytest.raises(Env0Error):
        package_sha256(pkg)  # the hash never reads through it either

    from env0_posttrain.tasks.__main__ import main  # the CLI door: exit 2 and the promised reward file

    out = tmp_path / "reward.json"
    assert main(["env0", str(pkg), "--oracle", "--reward-file", str(out)]) == 2
    body = json.loads(out.read_text())
    assert body["reward"] is None and entry in body["verifier_error"] and value not in out.read_text()
    assert main(["env0", str(FIXTURE), "--oracle", "--reward-file", str(out)]) == 0  # the runner goes on
    assert json.loads(out.read_text())["reward"] == 1.0


def test_links_inside_the_package_are_kept_as_links_and_hashed_as_before(tmp_path):
    """A link to a file of the package is fine: read as that file (the hash is the one an older importer gave) and
    copied as the link it is, so test.sh still finds its helper."""
    pkg = _pkg(tmp_path)
    plain = package_sha256(pkg)
    (pkg / "tests" / "evaluate.py").rename(pkg / "data" / "evaluate.py")
    (pkg / "tests" / "evaluate.py").symlink_to("../data/evaluate.py")
    assert load_package(pkg).name == pkg.name
    assert package_sha256(pkg) != plain  # the file moved: another package, hashed by its content at each path

    from env0_posttrain.tasks.env0.package.files import copy_folder

    dest = tmp_path / "copy"
    dest.mkdir()
    copy_folder(pkg / "tests", dest, pkg)
    assert os.readlink(dest / "evaluate.py") == "../data/evaluate.py" and (dest / "test.sh").is_file()


def test_the_corpus_import_drops_a_linking_package_with_its_reason(tmp_path, secret):
    from env0_posttrain.spec.runspec import TaskSelection
    from env0_posttrain.tasks.env0.corpus.importer import source_task_set

    host, value = secret
    src = tmp_path / "corpus"
    for name in ("good", "bad"):
        shutil.copytree(FIXTURE, src / name)
    (src / "bad" / "solution" / "notes.txt").symlink_to(host / "secret.txt")
    sel = TaskSelection(source=str(src), families=["multi-app", "mail"], n_train=1, n_eval=0, seed=1)
    ts = source_task_set(sel, include_noop_pass=True, env0_root=FIXTURES / "env0_root")
    assert [t.recipe.items["package"] for t in ts.tasks] == ["good"]
    assert "solution/notes.txt" in ts.dropped["bad"] and "leaves the package" in ts.dropped["bad"]
    assert value not in json.dumps(ts.dropped)


def test_a_package_that_turns_hostile_after_import_fails_its_episodes_stored_and_counted(tmp_path, secret):
    from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
    from env0_posttrain.agent.environment import WorkspaceEnv
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.task_paths import TaskPaths

    host, value = secret
    src = tmp_path / "corpus"
    shutil.copytree(FIXTURE, src / "pkg")
    task = import_package(src / "pkg", src, env0_root=FIXTURES / "env0_root")
    (src / "pkg" / "tests" / "fixtures").symlink_to(host)  # after the import
    eps: list = []
    s = run_rollouts_sync([task], "teacher", 2, oracle_endpoint(skill=1.0), AgentSettings(max_steps=40), "r", set(),
                          eps.append, progress=False, env=WorkspaceEnv(TaskPaths(FIXTURES / "env0_root", src)))
    assert s.played == s.completed == len(eps) == 2 and s.counted_failed == 0
    # its workspace cannot be set up (the package is read before it is seeded): no verdict, a fail of the round
    assert s.stop_conditions == {"environment_error": 2} and s.harness_failures == {"setup_error": 2}
    assert all(e.verifier is None and e.reward == -1.0 for e in eps)
    assert all("leaves the package" in e.error and value not in e.model_dump_json() for e in eps)


def test_a_package_the_runner_fails_on_still_gets_its_reward_file(tmp_path, monkeypatch):
    """Whatever breaks in the runner on a package (here: an error no step expects), the CLI writes the reward file."""
    from env0_posttrain.tasks.__main__ import main
    from env0_posttrain.tasks.env0.run import runner

    def broken(*a, **kw):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(runner, "seeded_start", broken)
    out = tmp_path / "reward.json"
    assert main(["env0", str(FIXTURE), "--oracle", "--reward-file", str(out)]) == 2
    body = json.loads(out.read_text())
    assert body["reward"] is None and "RecursionError" in body["verifier_error"], body
