"""`env0-posttrain doctor` on made-up machines: a PATH without bubblewrap, /proc settings that forbid user
namespaces, a GPU without its kernels, a hosted teacher without its key. What the given spec needs and lacks fails
the command; what it does not need is shown with its fix and does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from env0_posttrain.cli.doctor import Machine, Needs, diagnose, failing
from env0_posttrain.cli.main import app
from env0_posttrain.spec.runspec import RunSpec, write_spec

APT = "apt-get install -y bubblewrap libseccomp2"
runner = CliRunner()


def _bin(tmp_path: Path, *names: str) -> Path:
    d = tmp_path / "bin"
    d.mkdir(parents=True, exist_ok=True)
    for name in names:
        (d / name).write_text("#!/bin/sh\nexit 0\n")
        (d / name).chmod(0o755)
    return d


def _machine(tmp_path: Path, *tools: str, proc: dict[str, str] | None = None, **kw) -> Machine:
    root = tmp_path / "proc"
    for rel, value in (proc or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(value + "\n")
    kw.setdefault("seccomp_problem", lambda: None)
    kw.setdefault("containment_problem", lambda: None)
    kw.setdefault("disk_free", lambda _p: 50 * 2**30)
    kw.setdefault("shipped_root", tmp_path / "shipped")  # no manifest: nothing shipped, nothing to check
    return Machine(env={"PATH": str(_bin(tmp_path, *tools))}, proc=root, dev=tmp_path / "dev", euid=1000, **kw)


def _by_name(checks):
    return {c.name: c for c in checks}


def test_a_fresh_machine_without_bubblewrap_is_told_what_to_install(tmp_path):
    checks = diagnose(_machine(tmp_path, "unshare"), Needs(sandbox=True), tmp_path / "data")
    c = _by_name(checks)
    assert c["bubblewrap"].status == "missing" and c["bubblewrap"].fix == APT
    assert c["unshare"].status == "ok" and "sandbox" not in c  # no container is tried without bwrap
    assert [f.name for f in failing(checks)] == ["bubblewrap"]
    assert not failing(diagnose(_machine(tmp_path, "unshare"), Needs(sandbox=False), tmp_path / "data"))


def test_user_namespaces_turned_off_are_named_with_their_sysctl(tmp_path):
    proc = {"sys/user/max_user_namespaces": "0", "sys/kernel/unprivileged_userns_clone": "0",
            "sys/kernel/apparmor_restrict_unprivileged_userns": "1"}
    c = _by_name(diagnose(_machine(tmp_path, "bwrap", "unshare", proc=proc), Needs(sandbox=True), tmp_path))
    ns = c["user namespaces"]
    assert ns.status == "missing" and ns.needed
    assert "sysctl -w user.max_user_namespaces=15000" in ns.fix
    assert "sysctl -w kernel.unprivileged_userns_clone=1" in ns.fix
    assert "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in ns.fix
    ok = _by_name(diagnose(_machine(tmp_path / "b", "bwrap", "unshare", proc={"sys/user/max_user_namespaces": "99"}),
                           Needs(sandbox=True), tmp_path))
    assert ok["user namespaces"].status == "ok" and ok["sandbox"].status == "ok"


def test_no_libseccomp_and_a_refusing_bwrap_are_named(tmp_path):
    m = _machine(tmp_path, "bwrap", "unshare", seccomp_problem=lambda: "cannot compile the filter (no libseccomp)")
    c = _by_name(diagnose(m, Needs(sandbox=True), tmp_path))
    assert c["seccomp"].status == "missing" and c["seccomp"].fix == "apt-get install -y libseccomp2"
    m = _machine(tmp_path, "bwrap", "unshare", containment_problem=lambda: "bwrap refused: no permission")
    c = _by_name(diagnose(m, Needs(sandbox=True), tmp_path))
    assert c["sandbox"].status == "missing" and "bwrap refused" in c["sandbox"].detail
    assert "sandbox" not in _by_name(diagnose(m, Needs(sandbox=True), tmp_path, probe=False))


def test_a_gpu_without_its_kernels_fails_a_cuda_spec_only(tmp_path):
    m = _machine(tmp_path, "nvidia-smi", cuda_available=lambda: True, has_module=lambda name: name == "flash_attn")
    c = _by_name(diagnose(m, Needs(cuda=True), tmp_path))
    assert c["CUDA"].status == "ok"
    kernels = c["training kernels"]
    assert kernels.status == "missing" and "liger-kernel" in kernels.detail and "flash-attn" not in kernels.detail
    assert kernels.fix == "pip install -c constraints.txt -e '.[gpu]'"
    assert [f.name for f in failing(diagnose(m, Needs(cuda=True), tmp_path))] == ["training kernels"]
    assert not failing(diagnose(m, Needs(cuda=False), tmp_path))
    cpu = diagnose(_machine(tmp_path / "c"), Needs(cuda=True), tmp_path)
    assert [f.name for f in failing(cpu)] == ["CUDA"]
    assert _by_name(diagnose(_machine(tmp_path / "d"), Needs(), tmp_path))["CUDA"].status == "absent"


def test_the_teacher_key_variable_of_a_spec(tmp_path):
    m = _machine(tmp_path)
    needs = Needs(teacher=("openai/gpt-4o-mini", None, "MY_TEACHER_KEY"))
    key = _by_name(diagnose(m, needs, tmp_path))["teacher key"]
    assert key.status == "missing" and key.fix == "export MY_TEACHER_KEY=..." and "MY_TEACHER_KEY" in key.detail
    m.env = {**m.env, "MY_TEACHER_KEY": "k"}
    assert _by_name(diagnose(m, needs, tmp_path))["teacher key"].status == "ok"
    oracle = _by_name(diagnose(m, Needs(teacher=("env0-oracle/oracle", None, None)), tmp_path))["teacher key"]
    assert oracle.status == "ok" and "no key" in oracle.detail


def test_a_shipped_base_whose_files_changed_fails_a_tiny_student_spec(tmp_path):
    root = tmp_path / "shipped"
    (root / "tiny-qwen3-0123456789abcdef").mkdir(parents=True)
    (root / "tiny-qwen3-0123456789abcdef" / "model.safetensors").write_bytes(b"changed")
    (root / "manifest.json").write_text(json.dumps({"students": [{
        "name": "tiny-qwen3-0123456789abcdef", "recipe": "0" * 16, "torch_threads": 2, "built_on": "cpu",
        "files": {"model.safetensors": "0" * 64}}]}))
    c = _by_name(diagnose(_machine(tmp_path), Needs(tiny=True), tmp_path))["shipped base"]
    assert c.status == "missing" and c.needed and "model.safetensors" in c.detail and "base rebuild --write" in c.fix
    assert not _by_name(diagnose(_machine(tmp_path), Needs(tiny=False), tmp_path))["shipped base"].needed
    (root / "manifest.json").unlink()
    assert _by_name(diagnose(_machine(tmp_path), Needs(tiny=True), tmp_path))["shipped base"].status == "ok"


def test_chromium_disk_and_dagster_home(tmp_path):
    c = _by_name(diagnose(_machine(tmp_path, "chromium", disk_free=lambda _p: 2**29), Needs(), tmp_path / "data"))
    assert c["Chromium"].status == "absent" and "chromedriver" in c["Chromium"].detail
    assert c["Chromium"].fix == "apt-get install -y chromium chromium-driver" and not c["Chromium"].needed
    assert c["free disk"].status == "missing" and "ENV0_DATA_DIR" in c["free disk"].fix
    assert c["Dagster home"].status == "ok" and str(tmp_path / "data" / "dagster_home") in c["Dagster home"].detail


@pytest.mark.parametrize("tools, code", [((), 1), (("bwrap", "unshare"), 0)])
def test_the_command_fails_when_the_given_spec_lacks_something(tmp_path, monkeypatch, tools, code):
    spec = RunSpec.model_validate({"run_id": "pk", "tasks": {"source": str(tmp_path)}})
    path = write_spec(spec, tmp_path / "runs")
    monkeypatch.setenv("PATH", str(_bin(tmp_path, *tools)))
    result = runner.invoke(app, ["doctor", "--spec", str(path), "--no-probe", "--data-dir", str(tmp_path / "d")])
    assert result.exit_code == code, result.output
    assert "bubblewrap" in result.output
    if code:
        assert f"needs what is missing here: bubblewrap ({APT}); unshare (apt-get install -y util-linux)" in \
            result.output.replace("\n", "")
    demo = runner.invoke(app, ["doctor", "--no-probe", "--data-dir", str(tmp_path / "d")])
    assert demo.exit_code == 0, demo.output  # the demo needs no sandbox
