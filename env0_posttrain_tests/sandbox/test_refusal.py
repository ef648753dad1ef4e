"""Where commands cannot be confined (no bubblewrap here, or it refuses), a package fails naming the setting that
forces the weaker mode, and the shell surface refuses outright; it never falls back on its own. Runs everywhere:
the missing tool is simulated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain.tasks.__main__ import main
from env0_posttrain.sandbox import box as sandbox_mod
from env0_posttrain.sandbox import root as sandbox_root
from env0_posttrain_tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "env0_invoice"


@pytest.fixture()
def no_bwrap(monkeypatch):
    monkeypatch.setattr(sandbox_root, "bwrap_path", lambda: None)


def test_a_package_fails_naming_the_setting_for_the_weaker_mode(no_bwrap, tmp_path: Path) -> None:
    out = tmp_path / "reward.json"
    assert main(["env0", str(FIXTURE), "--oracle", "--reward-file", str(out)]) == 2
    err = json.loads(out.read_text())["verifier_error"]
    assert err.startswith("lay out sandbox: ") and "bubblewrap (`bwrap`) is not installed" in err
    assert "set ENV0_SANDBOX=unconfined" in err
    assert "`apt-get install -y bubblewrap libseccomp2`" in err  # a fresh machine is told what to install


def test_a_bwrap_that_refuses_is_named_too(monkeypatch) -> None:
    monkeypatch.setattr(sandbox_mod, "containment_problem", lambda: "bwrap refused: No permissions to create new namespace")
    from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox
    from env0_posttrain.workspace.environment import Workspace

    with pytest.raises(sandbox_mod.SandboxUnavailable, match="No permissions to create new namespace.*ENV0_SANDBOX=unconfined"):
        env0_sandbox(Workspace.seeded(0), mode="namespaces").__enter__()


def test_the_shell_surface_refuses_to_run_unconfined_or_unconfinable(no_bwrap, monkeypatch) -> None:
    from env0_posttrain.agent.shell.sandbox import open_task_sandbox
    from env0_posttrain.tasks import build_workspace, generate_tasks
    from env0_posttrain.tasks.task_paths import NO_PATHS

    task = generate_tasks(0, per_template=1)[0]
    with pytest.raises(RuntimeError, match=r"only inside the confined sandbox, which cannot be made here \(bubblewrap "
                       r"\(`bwrap`\) is not installed\): install bubblewrap") as err:
        with open_task_sandbox(task, build_workspace(task), ShellSpec(), NO_PATHS):
            pass
    assert "ENV0_SANDBOX=unconfined" not in str(err.value)  # not offered: the shell surface refuses it
    assert "`apt-get install -y bubblewrap libseccomp2`" in str(err.value)
    monkeypatch.setenv("ENV0_SANDBOX", "unconfined")
    with pytest.raises(RuntimeError, match="only inside the confined sandbox"):
        with open_task_sandbox(task, build_workspace(task), ShellSpec(), NO_PATHS):
            pass


def test_a_machine_without_libseccomp_is_refused_naming_it(monkeypatch, tmp_path: Path) -> None:
    """No seccomp filter, no confined sandbox: the package fails naming libseccomp (never runs without the filter)."""
    from env0_posttrain.sandbox import seccomp as sandbox_seccomp

    def missing():
        raise RuntimeError("Unable to find libseccomp")

    monkeypatch.setattr(sandbox_seccomp, "_library", missing)
    sandbox_seccomp.filter_bpf.cache_clear()
    sandbox_seccomp.keyctl_number.cache_clear()
    try:
        out = tmp_path / "reward.json"
        assert main(["env0", str(FIXTURE), "--oracle", "--reward-file", str(out)]) == 2
        err = json.loads(out.read_text())["verifier_error"]
        assert "cannot compile the sandbox's seccomp filter (RuntimeError: Unable to find libseccomp)" in err
        assert "libseccomp2" in err and "ENV0_SANDBOX=unconfined" in err
    finally:
        monkeypatch.undo()
        sandbox_seccomp.filter_bpf.cache_clear()
        sandbox_seccomp.keyctl_number.cache_clear()
