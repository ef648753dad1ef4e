"""env0's container layout without Docker: what a package's script sees inside a sandbox (one task under /tasks,
the needle manifest in /data, /logs, a private /tmp, env0's ports on a private loopback), what it cannot do
(write outside its folders), and that two sandboxes side by side do not see each other."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from env0_posttrain.tasks.__main__ import main
from env0_posttrain.tasks.env0.package.load import Env0Error, load_needles
from env0_posttrain.tasks.env0.run.runner import run_and_record
from env0_posttrain.sandbox.box import Sandbox, containment_problem
from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox
from env0_posttrain.tasks.env0.services import SERVICES
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain_tests.support.paths import FIXTURES, REPO as WORKTREE

FIXTURE = FIXTURES / "env0_invoice"


def _namespaces() -> str | None:
    if shutil.which("curl") is None:
        return "needs curl"
    return containment_problem()


pytestmark = pytest.mark.skipif(_namespaces() is not None, reason=f"no confined sandbox here: {_namespaces()}")
MANIFEST = {"task": "env0_invoice", "needles": [{"role": "invoice", "params": {"total": "1"}}]}


def sh(sb: Sandbox, cmd: str, **kw) -> tuple[int, str]:
    res = sb.run(["bash", "-c", cmd], timeout=kw.pop("timeout", 30), output_cap=kw.pop("output_cap", 1 << 16), **kw)
    return res.returncode, res.stdout + res.stderr


@pytest.fixture(scope="module")
def sb():
    with env0_sandbox(Workspace.seeded(0), package_dir=FIXTURE, manifest=MANIFEST, mode="namespaces") as box:
        yield box


def test_a_script_sees_env0s_layout_with_one_task(sb: Sandbox) -> None:
    rc, out = sh(sb, 'echo "$TASKS_DIR"; ls /tasks; ls /tasks/*/data; ls /data; ls /logs; cat /data/_needle_manifest_*.json')
    assert rc == 0, out
    lines = out.splitlines()
    assert lines[:2] == ["/tasks", "env0_invoice"] and "needles.py" in lines
    assert "_needle_manifest_env0_invoice.json" in lines and {"agent", "verifier"} <= set(lines)
    assert json.loads(out[out.index("{"):]) == MANIFEST
    assert sh(sb, "ls /solution /tests") == (0, "/solution:\n\n/tests:\n")  # scripts arrive only when they run


def test_private_tmp_is_kept_across_commands_and_not_visible_to_the_host(sb: Sandbox) -> None:
    name = f"env0-sandbox-test-{uuid.uuid4().hex}"
    assert sh(sb, f"echo inside > /tmp/{name}")[0] == 0
    assert sh(sb, f"cat /tmp/{name}") == (0, "inside\n")  # the next command, same /tmp
    assert not (Path("/tmp") / name).exists()
    assert sb.host_path(f"/tmp/{name}").read_text() == "inside\n"  # only in the sandbox's own folder


def test_writes_outside_the_sandbox_are_refused(sb: Sandbox) -> None:
    target = WORKTREE / f"written-from-sandbox-{uuid.uuid4().hex}"
    for path, why in ((target, "No such file or directory"), (Path("/usr") / target.name, "Read-only file system"),
                      (Path("/tasks/env0_invoice/data/x"), "Read-only file system"),
                      (Path("/solution/x"), "Read-only file system")):
        rc, out = sh(sb, f"echo x > {path}")
        assert rc != 0 and why in out, (path, out)  # the checkout is not even there
        assert not path.exists()
    assert sh(sb, "echo ok > /logs/verifier/probe && cat /logs/verifier/probe") == (0, "ok\n")


def test_a_command_sees_an_allowlist_root_as_a_user_without_capabilities(sb: Sandbox) -> None:
    rc, out = sh(sb, "ls -A /; echo --; id -u; grep CapEff /proc/self/status; ls /proc | grep -c '^[0-9]'")
    assert rc == 0, out
    top, rest = out.split("--\n")
    assert set(top.split()) <= {"bin", "data", "dev", "etc", "lib", "lib32", "lib64", "libx32", "logs", "proc",
                                "root", "sbin", "solution", "tasks", "tests", "tmp", "usr", ".env0"}, top
    uid, cap, procs = rest.split("\n")[:3]
    assert (uid, cap) == ("1000", "CapEff:\t0000000000000000")
    assert int(procs) <= 5  # its own pid namespace: bwrap, bash, ls, grep


def test_services_answer_at_env0s_ports_on_the_private_loopback(sb: Sandbox) -> None:
    for svc in SERVICES:
        rc, out = sh(sb, f"curl -sf http://localhost:{svc.port}/health")
        assert (rc, json.loads(out or "{}")) == (0, {"status": "ok"}), svc
    rc, out = sh(sb, 'gws gmail users labels list --params \'{"userId": "me"}\'')
    assert rc == 0 and "INBOX" in out
    assert sh(sb, 'curl -s "$GMAIL_URL/_admin/action_log"')[1].count('"path"') >= 1  # logged like env0's mock


def test_timeouts_kill_and_output_is_capped(sb: Sandbox) -> None:
    res = sb.run(["bash", "-c", "sleep 30"], timeout=0.5, output_cap=100)
    assert res.timed_out and res.returncode != 0
    res = sb.run(["bash", "-c", "head -c 100000 /dev/zero | tr '\\0' a"], timeout=30, output_cap=1000)
    assert res.truncated and res.stdout == "a" * 1000 and not res.timed_out
    assert sb.run(["no-such-command"], timeout=5, output_cap=100).returncode == 127


def test_commands_at_once_in_one_sandbox_keep_their_exit_codes(sb: Sandbox) -> None:
    codes: list[int] = []

    def some(code: int) -> None:
        for _ in range(10):  # an orphan-leaving command beside them: the reaper must not take their statuses
            sb.run(["sh", "-c", "sleep 0.01 & exit 0"], timeout=10, output_cap=100)
            codes.append(sb.run(["sh", "-c", f"exit {code}"], timeout=10, output_cap=100).returncode - code)

    threads = [threading.Thread(target=some, args=(c,)) for c in (3, 5, 7, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert codes == [0] * 40


def test_two_sandboxes_in_parallel_do_not_see_each_others_tmp() -> None:
    seen: dict[int, tuple[int, str]] = {}
    barrier = threading.Barrier(2)

    def one(i: int) -> None:
        with env0_sandbox(Workspace.seeded(0), package_dir=FIXTURE, manifest=MANIFEST, mode="namespaces") as box:
            sh(box, f"echo {i} > /tmp/state.json; touch /tmp/mine-{i}")
            barrier.wait(timeout=60)  # both sandboxes live, both wrote the same fixed path
            seen[i] = sh(box, "cat /tmp/state.json; ls /tmp | grep mine-")
            barrier.wait(timeout=60)

    threads = [threading.Thread(target=one, args=(i,)) for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert seen == {1: (0, "1\nmine-1\n"), 2: (0, "2\nmine-2\n")}


def test_a_builtin_task_gets_an_empty_tasks_dir_and_the_services() -> None:
    with env0_sandbox(Workspace.seeded(0), mode="namespaces") as box:
        assert sh(box, "ls -A /tasks; ls /data; echo ${NEEDLE_MANIFEST:-none}") == (0, "none\n")
        assert sh(box, "curl -sf localhost:9003/health")[0] == 0


def test_unconfined_mode_keeps_the_layout_under_a_folder() -> None:
    with env0_sandbox(Workspace.seeded(0), package_dir=FIXTURE, manifest=MANIFEST, mode="unconfined") as box:
        rc, out = sh(box, 'ls "$TASKS_DIR"; cat "$NEEDLE_MANIFEST"; curl -sf "$GMAIL_URL/health"')
        assert rc == 0 and out.startswith("env0_invoice\n") and '"status":"ok"' in out, out
        assert box.path("/tmp").startswith(str(box.root))


def test_two_packages_run_in_parallel_each_at_full_reward() -> None:
    results = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, run_and_record(FIXTURE, oracle=True)))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert [(r.reward, r.verifier_error, r.sandbox) for r in results.values()] == [(1.0, None, "namespaces")] * 2


def test_needles_that_never_return_fail_the_package_in_time(tmp_path: Path) -> None:
    needles = tmp_path / "needles.py"
    needles.write_text("while True:\n    pass\n")
    with pytest.raises(Env0Error, match=r"load needles: .*needles.py: did not return within 0.5 s"):
        load_needles(needles, timeout=0.5)
    # through the CLI, the package's own build timeout bounds it: exit 2 and a named verifier_error
    pkg = tmp_path / "hangs"
    shutil.copytree(FIXTURE, pkg)
    (pkg / "data" / "needles.py").write_text("import time\nwhile True:\n    time.sleep(0.01)\n")
    toml = pkg / "task.toml"
    toml.write_text(toml.read_text().replace("[environment]\n", "[environment]\nbuild_timeout_sec = 1\n"))
    out = tmp_path / "reward.json"
    assert main(["env0", str(pkg), "--oracle", "--reward-file", str(out)]) == 2
    assert json.loads(out.read_text()) == {"reward": None, "verifier_error":
                                           f"load needles: {pkg / 'data' / 'needles.py'}: did not return within 1 s"}


def test_an_unknown_sandbox_mode_is_the_packages_named_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ENV0_SANDBOX", "docker")
    out = tmp_path / "reward.json"
    assert main(["env0", str(FIXTURE), "--oracle", "--reward-file", str(out)]) == 2
    err = json.loads(out.read_text())["verifier_error"]
    assert err.startswith("lay out sandbox: ") and "ENV0_SANDBOX='docker'" in err and "'unconfined'" in err


def test_a_package_python_in_a_venv_under_tmp_works_in_the_sandbox(tmp_path: Path, monkeypatch) -> None:
    """ENV0_PACKAGE_PYTHON may name a venv anywhere (here under /tmp, which the sandbox replaces by its own): its
    pyvenv.cfg, its site-packages and the base interpreter it points at are all there for the package's python3."""
    import sys
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    (site / "env0_probe_module.py").write_text("WHERE = 'the venv'\n")
    monkeypatch.setenv("ENV0_PACKAGE_PYTHON", str(venv / "bin" / "python"))
    with env0_sandbox(Workspace.seeded(0), package_dir=FIXTURE, manifest=MANIFEST, mode="namespaces") as box:
        rc, out = sh(box, "python3 -c 'import sys, env0_probe_module as m; print(m.WHERE, sys.prefix)'")
    assert (rc, out) == (0, f"the venv {venv}\n")
    pkg = tmp_path / "pkg"
    shutil.copytree(FIXTURE, pkg)
    assert run_and_record(pkg, oracle=True).reward == 1.0  # the oracle's own python3 steps run on that venv


SPAWN_CHECK = """
import json, sys
sys.path.insert(0, sys.argv[1])
import keeper
tasks, procs = json.loads(sys.argv[2]), json.loads(sys.argv[3])
found = []
for spawner in (keeper.Spawner(tasks, procs), keeper.Spawner([], procs)):  # v1 thread, v2 fallback
    p = spawner.popen(["sleep", "30"])
    members = {int(x) for f in procs for x in open(f).read().split()}
    found.append(p.pid in members)
    p.kill()
    p.wait()
print(json.dumps(found))
"""


def test_each_command_is_born_inside_the_sandboxs_cgroups_in_both_ways_of_starting_it() -> None:
    import sys

    from env0_posttrain.sandbox import keeper
    from env0_posttrain.sandbox.cgroup import SandboxCgroup

    cg = SandboxCgroup.make(64, 256 << 20)
    if cg is None or not cg.tasks_files:
        pytest.skip("no cgroup v1 hierarchies the runner may write here")
    try:  # in a process of its own: the v1 way moves one of its threads into the cgroups for good
        out = subprocess.run([sys.executable, "-c", SPAWN_CHECK, str(Path(keeper.__file__).parent),
                              json.dumps(cg.tasks_files), json.dumps(cg.procs_files)],
                             capture_output=True, text=True, timeout=60)
    finally:
        cg.remove()
    assert json.loads(out.stdout or "null") == [True, True], out.stderr
