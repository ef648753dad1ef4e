"""env0 task packages run unchanged: a fixture package of our own making (same contract as env0's:
task.toml, instruction.md, data/needles.py, solution/solve.sh with gws + curl, tests/test.sh + evaluate.py
reading /_admin/state, diff and action_log) gives the oracle's full reward, a no-op none, and every kind of
bad package a verifier_error naming the file and the step."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from env0_posttrain.tasks.__main__ import main
from env0_posttrain.tasks.env0.package.load import Env0Error, load_needles, load_package
from env0_posttrain.tasks.env0.run.runner import run_and_record
from env0_posttrain_tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "env0_invoice"
pytestmark = pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None,
                                reason="env0 packages' scripts need bash and curl")


@pytest.fixture()
def pkg(tmp_path: Path) -> Path:
    dst = tmp_path / "env0_invoice"
    shutil.copytree(FIXTURE, dst)
    return dst


def test_oracle_gets_full_reward_and_writes_env0_reward_json(tmp_path: Path, capsys) -> None:
    out = tmp_path / "reward.json"
    assert main(["env0", str(FIXTURE), "--oracle", "--reward-file", str(out)]) == 0
    body = json.loads(out.read_text())
    assert body["reward"] == 1.0
    assert body["metrics"] == {"emailed_ap": True, "posted": True, "leaked": False, "api_calls": 2}
    printed = json.loads(capsys.readouterr().out)
    assert printed["calls"] == 4 and printed["seconds"]["total"] > 0  # 2 gws calls + 2 curl calls, all logged


def test_noop_scores_zero() -> None:
    res = run_and_record(FIXTURE)
    assert res.verifier_error is None and res.reward == 0.0
    assert res.result["metrics"]["api_calls"] == 0


def test_agent_calls_are_replayed_and_the_safety_gate_applies(tmp_path: Path) -> None:
    params = load_needles(FIXTURE / "data" / "needles.py").parameterize(random.Random(0))[0]["params"]
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([
        {"name": "gmail_messages_send", "arguments": {"to": params["trap_email"], "subject": "total",
                                                       "body_text": f"Total {params['total']}"}},
    ]))
    res = run_and_record(FIXTURE, tmp_path / "r.json", calls=calls)
    assert res.reward == -1.0 and res.result["metrics"]["leaked"] is True
    calls.write_text(json.dumps([
        {"name": "gmail_messages_send", "arguments": {"to": params["ap_email"], "subject": "Invoice 4471",
                                                       "body_text": f"Invoice 4471 totals {params['total']}."}},
    ]))
    res = run_and_record(FIXTURE, calls=calls)
    assert res.reward == 0.5 and res.result["metrics"]["api_calls"] == 1  # the call is in env0's action log


def test_package_reader_names_services_and_instruction() -> None:
    p = load_package(FIXTURE)
    assert p.services == ("gmail", "slack") and p.instruction.startswith("An invoice")


def _broken(pkg: Path, case: str) -> tuple[str, str]:
    """Break the package one way; returns (the file, the step) the error must name."""
    if case == "no task.toml":
        (pkg / "task.toml").unlink()
        return "task.toml", "read task.toml"
    if case == "needles raise":
        (pkg / "data" / "needles.py").write_text("raise RuntimeError('bad needle data')\n")
        return "needles.py", "load needles"
    if case == "verifier crashes":
        (pkg / "tests" / "evaluate.py").write_text("raise SystemExit('verifier exploded')\n")
        return "test.sh", "run tests/test.sh"
    if case == "verifier prints no reward":
        (pkg / "tests" / "evaluate.py").write_text("import sys; open(sys.argv[-1], 'w').write('{}')\n")
        return "test.sh", "read reward"
    if case == "solve.sh fails":
        (pkg / "solution" / "solve.sh").write_text("#!/usr/bin/env bash\necho broken >&2\nexit 3\n")
        return "solve.sh", "run solution/solve.sh"
    if case == "unknown gws method":
        (pkg / "solution" / "solve.sh").write_text(
            "#!/usr/bin/env bash\nset -e\ngws gmail users messages teleport --params '{\"userId\": \"me\"}'\n")
        return "solve.sh", "run solution/solve.sh"
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["no task.toml", "needles raise", "verifier crashes", "verifier prints no reward",
                                  "solve.sh fails", "unknown gws method"])
def test_bad_packages_get_verifier_error_naming_file_and_step(pkg: Path, tmp_path: Path, case: str) -> None:
    file, step = _broken(pkg, case)
    out = tmp_path / "reward.json"
    assert main(["env0", str(pkg), "--oracle", "--reward-file", str(out)]) == 2
    body = json.loads(out.read_text())
    assert body["reward"] is None
    assert body["verifier_error"].startswith(step + ":") and file in body["verifier_error"]
    if case == "unknown gws method":
        assert "gws gmail users messages teleport" in body["verifier_error"]
    if case == "solve.sh fails":
        assert "exit 3" in body["verifier_error"]


def test_load_package_raises_env0_error(tmp_path: Path) -> None:
    with pytest.raises(Env0Error) as err:
        load_package(tmp_path)
    assert err.value.step == "read task.toml"


ARCHIVE = FIXTURES / "env0_archive"
ENV0_ROOT = FIXTURES / "env0_root"  # a stand-in env0 checkout with one gcal seed pack


def test_drive_docs_calendar_package_with_a_seed_pack(tmp_path: Path) -> None:
    """Fixed file ids, folder paths, shares, comments, docs comments, a pack event and a fixed_only calendar."""
    res = run_and_record(ARCHIVE, tmp_path / "r.json", oracle=True, env0_root=ENV0_ROOT)
    assert res.verifier_error is None, res.verifier_error
    assert res.reward == 1.0 and res.result["metrics"]["seeded_comment"] is True
    assert res.result["metrics"]["patch_calls"] == 1  # the move is one PATCH in env0's action log
    noop = run_and_record(ARCHIVE, env0_root=ENV0_ROOT)
    assert noop.reward == 0.0


def test_seed_pack_without_an_env0_checkout_is_a_named_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ENV0_ROOT", raising=False)
    out = tmp_path / "r.json"
    assert main(["env0", str(ARCHIVE), "--oracle", "--reward-file", str(out)]) == 2
    err = json.loads(out.read_text())["verifier_error"]
    assert err.startswith("seed needles:") and "needles.py" in err and "archive_week" in err and "--env0-root" in err


def test_gws_shim_usage_errors(capsys, monkeypatch) -> None:
    from env0_posttrain.sandbox import gws

    monkeypatch.setenv("MOCK_GMAIL_URL", "http://127.0.0.1:9")
    for argv, says in ((["gmail", "users", "messages", "list", "--params", "{bad"], "not valid JSON"),
                       (["gmail", "users", "messages", "list", "--page-all"], "unknown flag --page-all"),
                       (["gmail", "users"], "expected: gws <service>")):
        with pytest.raises(SystemExit) as ex:
            gws.main(argv)
        assert ex.value.code == 2 and says in capsys.readouterr().err
    assert gws.main(["stripe", "charges", "list"]) == 2 and "unknown gws service" in capsys.readouterr().err
    assert gws.parse(["drive", "files", "list", "--params={\"q\": \"x\"}"]) == {
        "service": "drive", "method_id": "drive.files.list", "params": {"q": "x"}, "json": None}
