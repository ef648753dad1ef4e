"""A stage exports its run's env0 checkout and package folder for its workers; the next run's stage in the same
process (the daemon's code server, `run materialize` of several runs) must not inherit them."""

from __future__ import annotations

import os
from pathlib import Path

from env0_posttrain.util.process_env import export
from env0_posttrain.stages.context import use_env0
from env0_posttrain.spec.runspec import parse_spec
from env0_posttrain.tasks.env0.verifier import SOURCE_ENV, source_root


def test_a_run_without_an_env0_root_does_not_inherit_the_previous_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ENV0_ROOT", raising=False)
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    (tmp_path / "corpus").mkdir()
    with_root = parse_spec({"run_id": "a", "env0": {"root": str(tmp_path)},
                            "tasks": {"source": "corpus", "templates": None, "n_train": 1, "n_eval": 1}}, "a")
    use_env0(with_root)
    assert os.environ["ENV0_ROOT"] == str(tmp_path.resolve())
    assert source_root() == (tmp_path / "corpus").resolve() and os.environ[SOURCE_ENV] == str(source_root())
    use_env0(parse_spec({"run_id": "b"}, "b"))
    assert "ENV0_ROOT" not in os.environ and SOURCE_ENV not in os.environ


def test_the_users_own_setting_comes_back_and_one_set_by_someone_else_is_left_alone(monkeypatch) -> None:
    monkeypatch.setenv("X_ENV0_TEST", "users")
    export("X_ENV0_TEST", "run-a")
    export("X_ENV0_TEST", "run-b")
    assert os.environ["X_ENV0_TEST"] == "run-b"
    export("X_ENV0_TEST", None)
    assert os.environ["X_ENV0_TEST"] == "users"
    export("X_ENV0_TEST", "run-c")
    os.environ["X_ENV0_TEST"] = "changed-by-someone-else"
    export("X_ENV0_TEST", None)
    assert os.environ["X_ENV0_TEST"] == "changed-by-someone-else"
