"""Attacks on the env0 sandbox through both doors: a hostile package's solve.sh (`python -m env0_posttrain.tasks env0
PKG --oracle`, in this process) and an agent's commands on the shell surface. Each test asserts the attack is
contained AND that the runner stays usable: on the package door test.sh, the next command of the same sandbox,
still runs and reports what solve.sh saw, and a clean package then scores 1.0 in the same process; on the shell
door the next command of the same session answers."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain_tests.support.paths import FIXTURES, REPO as WORKTREE

FIXTURE = FIXTURES / "env0_invoice"
LIMITS = ShellSpec(timeout_s=30, max_timeout_s=60, output_cap=20000, max_processes=48, max_memory_mb=128)
DOORS = ("package", "shell")


def _containment() -> str | None:
    try:
        from env0_posttrain.sandbox.box import containment_problem
    except ImportError:  # a sandbox without the check (run against an older tree)
        return None if shutil.which("unshare") else "no unshare"
    return containment_problem()


pytestmark = pytest.mark.skipif(_containment() is not None, reason=f"no confined sandbox here: {_containment()}")

TEST_SH = """#!/usr/bin/env bash
{ {after}; } > /logs/agent/after 2>&1
python3 - <<'PY'
import json, pathlib
def read(name):
    p = pathlib.Path("/logs/agent") / name
    return p.read_text(errors="replace")[-200000:] if p.exists() else "(nothing)"
json.dump({"reward": 1.0, "obs": read("obs"), "after": read("after")}, open("/logs/verifier/reward.json", "w"))
PY
"""


def _package(tmp: Path, solve: str, test: str | None = None, after: str = "true", capture: bool = True) -> Path:
    pkg = tmp / f"hostile-{uuid.uuid4().hex[:8]}"
    shutil.copytree(FIXTURE, pkg)
    head = "#!/usr/bin/env bash\n" + ("exec > /logs/agent/obs 2>&1\n" if capture else "")
    (pkg / "solution" / "solve.sh").write_text(head + solve + "\nexit 0\n")
    (pkg / "tests" / "test.sh").write_text(test if test is not None else TEST_SH.replace("{after}", after))
    return pkg


def _cli(pkg: Path, out: Path) -> tuple[int, dict]:
    from env0_posttrain.tasks.__main__ import main

    rc = main(["env0", str(pkg), "--oracle", "--reward-file", str(out)])
    return rc, json.loads(out.read_text())


def _runner_still_scores(tmp: Path) -> None:
    rc, reward = _cli(FIXTURE, tmp / f"clean-{uuid.uuid4().hex[:6]}.json")
    assert (rc, reward["reward"]) == (0, 1.0), reward


@pytest.fixture(scope="module")
def task():
    from env0_posttrain.tasks import generate_tasks

    return generate_tasks(0, per_template=1)[0]


def attack(door: str, script: str, tmp: Path, task, limits: ShellSpec = LIMITS, monkeypatch=None,
           after: str = "true") -> tuple[str, str]:
    """Run `script` (bash) through `door`, then `after` as the next command of the same sandbox; (what each
    printed). Asserts the runner stayed usable."""
    if door == "package":
        if monkeypatch is not None:  # the package door's limits, as small as the shell spec's for the test
            from env0_posttrain.sandbox import box as sandbox_mod

            small = sandbox_mod.SandboxLimits(max_processes=limits.max_processes, memory_mb=limits.max_memory_mb,
                                              writable_mb=limits.max_writable_mb,
                                              writable_files=limits.max_writable_files)
            monkeypatch.setattr(sandbox_mod, "SandboxLimits", lambda: small)
        rc, reward = _cli(_package(tmp, script, after=after), tmp / "reward.json")
        assert rc == 0 and reward.get("reward") == 1.0, reward  # test.sh, the next command, ran after the attack
        if monkeypatch is not None:
            monkeypatch.undo()
        _runner_still_scores(tmp)
        return reward["obs"], reward["after"]
    from env0_posttrain.agent.shell.session import ShellSession
    from env0_posttrain.tasks import build_workspace

    session = ShellSession(task, build_workspace(task), limits)
    try:
        out = session.run(script, 30).text
        then = session.run(after, 10).text
        assert session.run("echo alive", 10).text.startswith("alive")
    finally:
        session.close()
    return out, then


@pytest.mark.parametrize("door", DOORS)
def test_no_secret_of_the_host_reaches_a_command(door, tmp_path, task, monkeypatch):
    secret = f"sk-planted-{uuid.uuid4().hex}"
    monkeypatch.setenv("TEACHER_API_KEY", secret)
    host_file = WORKTREE / f".planted-secret-{uuid.uuid4().hex[:8]}"
    tmp_file = Path("/tmp") / f"planted-secret-{uuid.uuid4().hex[:8]}"
    try:
        for f in (host_file, tmp_file):
            f.write_text(secret)
        out, _ = attack(door, f"""
            env; cat /proc/*/environ /proc/*/cmdline | tr '\\0' '\\n'
            cat {host_file} {tmp_file} /etc/shadow /etc/pip.conf /etc/npmrc /root/.bash_history
            ls -d /work /root/.ssh /home /var /run /sys /mnt /opt /srv {WORKTREE}
            grep -rs sk-planted /proc/*/environ /etc /tmp /data /logs
            echo seen-the-end""", tmp_path, task)
    finally:
        host_file.unlink()
        tmp_file.unlink()
    assert "seen-the-end" in out and secret not in out
    assert "No such file or directory" in out  # the host's own folders are simply not there


@pytest.mark.parametrize("door", DOORS)
def test_nothing_on_the_host_can_be_written_even_after_a_remount(door, tmp_path, task):
    name = f"written-{uuid.uuid4().hex[:8]}"
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    targets = [Path("/usr") / name, site / f"{name}.pth", Path(sys.base_prefix) / name, WORKTREE / name,
               Path("/etc") / name]
    try:
        out, _ = attack(door, f"""
            id; grep Cap /proc/self/status
            mount -o remount,bind,rw /usr; echo remount=$?
            mount -o remount,rw /; echo remount-root=$?
            unshare -Urm sh -c 'mount -o remount,bind,rw /usr'; echo nested=$?
            v=$(cat /proc/sys/vm/swappiness); echo "$v" > /proc/sys/vm/swappiness; echo sysctl=$?
            for t in {' '.join(map(str, targets))}; do mkdir -p "$(dirname "$t")" 2>/dev/null; echo x > "$t"; done
            echo x > /tasks/env0_invoice/data/needles.py; echo x > /.env0/bin/gws; echo x > /etc/passwd
            echo seen-the-end""", tmp_path, task)
        written = [t for t in targets if t.exists()]
    finally:
        for t in targets:
            t.unlink(missing_ok=True)
    assert "seen-the-end" in out and "uid=1000" in out and not written
    assert "CapEff:\t0000000000000000" in out and "CapBnd:\t0000000000000000" in out
    for rc in ("remount=", "remount-root=", "nested=", "sysctl="):
        assert f"{rc}0" not in out, out
    assert "Invoice" in (FIXTURE / "data" / "needles.py").read_text()


@pytest.mark.parametrize("door", DOORS)
def test_a_unix_socket_on_the_host_is_out_of_reach(door, tmp_path, task):
    folder = Path("/var/tmp") / f"env0-attack-{uuid.uuid4().hex[:8]}"  # a host folder outside any layout path
    folder.mkdir()
    path, abstract = folder / "host.sock", f"env0-attack-{uuid.uuid4().hex[:8]}"
    listeners = []
    try:
        for addr in (str(path), "\0" + abstract):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(addr)
            s.listen(8)
            s.setblocking(False)
            listeners.append(s)
        out, _ = attack(door, f"""python3 - <<'PY'
import socket
for addr in ({str(path)!r}, "\\0{abstract}", "/run/docker.sock", "/var/run/docker.sock"):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(addr)
        print("CONNECTED-TO", repr(addr))
    except OSError as e:
        print("REFUSED-AT", repr(addr), e.strerror)
PY
echo seen-the-end""", tmp_path, task)
        for s in listeners:
            with pytest.raises(BlockingIOError):
                s.accept()  # nobody connected
    finally:
        for s in listeners:
            s.close()
        shutil.rmtree(folder)
    assert "seen-the-end" in out and "CONNECTED-TO" not in out and out.count("REFUSED-AT") == 4


@pytest.mark.parametrize("door", DOORS)
def test_the_file_size_cap_is_hard_and_the_cgroups_cannot_be_left(door, tmp_path, task):
    out, _ = attack(door, """
        ulimit -f unlimited; echo raise=$?
        python3 -c "import resource as r; r.setrlimit(r.RLIMIT_FSIZE, (r.RLIM_INFINITY,) * 2)"; echo raise-py=$?
        echo hard=$(ulimit -H -f)
        (ulimit -S -f 1; head -c 4096 /dev/zero > /tmp/big); echo write=$? size=$(stat -c %s /tmp/big)
        ls /sys/fs/cgroup; mount -t cgroup -o pids none /tmp; echo mount=$?
        unshare -C true; echo cgroupns=$?
        echo seen-the-end""", tmp_path, task)
    assert "seen-the-end" in out and f"hard={(1 << 30) // 1024}" in out
    assert "raise=0" not in out and "raise-py=0" not in out and "mount=0" not in out and "cgroupns=0" not in out
    assert "size=1024" in out  # the kernel stops the write at the limit


def _cgroups() -> bool:
    from env0_posttrain.sandbox.cgroup import SandboxCgroup

    cg = SandboxCgroup.make(64, 64 << 20)
    if cg is None:
        return False
    ok = {"pids", "memory"} <= set(cg.kinds)
    cg.remove()
    return ok


@pytest.mark.parametrize("door", DOORS)
def test_the_process_and_memory_limits_hold(door, tmp_path, task, monkeypatch):
    if not _cgroups():
        pytest.skip("no writable pids and memory cgroups on this machine: the two limits are not available")
    out, _ = attack(door, """python3 - <<'PY'
import os, signal, time
kids = []
for _ in range(100):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
print("started", len(kids))
for pid in kids:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
PY
python3 -c "x = bytearray(600 << 20); print('ALLOC' + 'ATED', len(x))"; echo mem=$?
python3 -S - <<'PY'
import os, signal, time
kids = []
for _ in range(30):  # each smaller than the keeper (~13 MB), together over the limit
    pid = os.fork()
    if pid == 0:
        x = bytearray(6 << 20)
        time.sleep(3)
        os._exit(0)
    kids.append(pid)
killed = sum(os.waitpid(pid, 0)[1] == signal.SIGKILL for pid in kids)
print("small-ones-killed", killed)
PY
echo seen-the-end""", tmp_path, task, monkeypatch=monkeypatch)
    started = int(out.split("started ")[1].split()[0])
    assert "seen-the-end" in out and 0 < started < LIMITS.max_processes
    assert "ALLOCATED" not in out and "mem=0" not in out
    killed = int(out.split("small-ones-killed ")[1].split()[0])
    assert 0 < killed < 30  # 30 small processes over the limit: some were killed (never the keeper: the next
    # command, test.sh or `echo alive`, answered)


@pytest.mark.parametrize("door", DOORS)
def test_the_control_channel_cannot_be_reached_flooded_or_forged(door, tmp_path, task):
    forged = json.dumps({"id": 0, "argv": ["sh", "-c", "touch /tmp/forged; sleep 1000"], "env": {}, "cwd": "/",
                         "timeout": 600, "cap": 1 << 30})
    out, then = attack(door, f"""
        ls /proc | grep -c '^[0-9]'
        echo x > /proc/1/fd/1; echo '{forged}' > /proc/1/fd/0
        for f in /proc/[0-9]*/fd/*; do echo '{forged}' > "$f"; done 2>/dev/null
        head -c 50M /dev/zero > /proc/1/fd/1
        head -c 20M /dev/urandom | tr -d '\\n' | head -c 3M
        printf '\\n{{"id": 0, "returncode": 0}}\\n\\xff\\xfe garbled\\n'
        kill -9 -1
        echo seen-the-end > /tmp/end""", tmp_path, task, after="sleep 0.5; cat /tmp/end; ls /tmp/forged; ps -eo args")
    assert then.startswith("seen-the-end")  # kill -9 -1 reached nothing but the command's own processes
    assert "No such file" in then and "sleep 1000" not in then  # the forged request never ran


@pytest.mark.parametrize("door", DOORS)
def test_a_flood_of_connections_or_bytes_to_the_services_fails_itself_only(door, tmp_path, task):
    out, then = attack(door, """python3 - <<'PY'
import socket
held = [socket.create_connection(("127.0.0.1", 9001)) for _ in range(200)]
for s in held:
    s.sendall(b"GET /health HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n")
served = 0
for s in held:
    s.settimeout(30)
    try:
        served += bool(s.recv(100))
    except OSError:
        pass
print("served", served)
big = socket.create_connection(("127.0.0.1", 9001))
big.sendall(b"POST /gmail/v1/users/me/messages/send HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n"
            b"Content-Length: 104857600\\r\\n\\r\\n")
sent = 0
try:
    while sent < 100 << 20:
        sent += big.send(b"a" * (1 << 20))
except OSError:
    pass
print("sent-before-cut", sent >> 20)
PY""", tmp_path, task, after="curl -s localhost:9001/health")
    assert "served 32" in out  # at most 32 at once; the rest were closed
    assert int(out.split("sent-before-cut ")[1].split()[0]) < 100  # the 100 MB body was cut off
    assert '"status":"ok"' in then  # and the services answer the next command


@pytest.mark.parametrize("door", DOORS)
def test_no_process_outlives_its_command(door, tmp_path, task):
    marker = f"{1000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6}"
    out, then = attack(door, f"""
        setsid nohup sleep {marker} >/dev/null 2>&1 &
        (sleep {marker} &) ; nohup sleep {marker} >/dev/null 2>&1 & disown -a
        python3 -c "import os, subprocess; os.fork() or subprocess.Popen(['sleep', '{marker}'], start_new_session=True)"
        ps -eo args | grep -c '^sleep {marker}'""", tmp_path, task, after="ps -eo args")
    assert out.split()[0] != "0"  # they did start
    assert marker not in then  # the next command sees none of them
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, marker)]


def _cmdline_has(proc: Path, marker: str) -> bool:
    try:
        return marker in (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def test_a_reward_file_planted_as_a_link_or_fifo_is_refused(tmp_path):
    """test.sh itself is the attacker: it points reward.json (or its folder) at a host file, or makes it a fifo."""
    secret = tmp_path / "host-secret.json"
    secret.write_text(json.dumps({"reward": 1.0, "leaked": "host-only-secret"}))
    for plant in (f"ln -sf {secret} /logs/verifier/reward.json",
                  f"rm -rf /logs/verifier && ln -s {tmp_path} /logs/verifier && cp /dev/null /tmp/x",
                  "mkfifo /logs/verifier/reward.json"):
        rc, reward = _cli(_package(tmp_path, "true", f"#!/usr/bin/env bash\n{plant}\n"), tmp_path / "reward.json")
        assert rc == 2 and reward["reward"] is None and "wrote no reward" in reward["verifier_error"], reward
        assert "host-only-secret" not in json.dumps(reward)
    assert secret.exists()  # and nothing the parent removed followed the link
    _runner_still_scores(tmp_path)


RSS_SCRIPT = textwrap.dedent("""
    import resource, sys
    from env0_posttrain.agent.shell.session import ShellSession
    from env0_posttrain.spec.runspec import ShellSpec
    from env0_posttrain.tasks import build_workspace, generate_tasks
    task = generate_tasks(0, per_template=1)[0]
    s = ShellSession(task, build_workspace(task), ShellSpec())
    for cmd in sys.argv[1:]:
        s.run(cmd, 60)
    assert s.run("echo alive", 10).text.startswith("alive")
    s.close()
""")
FLOOD = ("head -c 600M /dev/zero", "head -c 300M /dev/zero > /proc/1/fd/1", "yes | head -c 300M >&2")


def _maxrss_kb(argv: list[str], cwd: Path) -> tuple[int, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(WORKTREE)  # this tree's code, whichever checkout the venv was installed from
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss


@pytest.mark.parametrize("door", DOORS)
def test_the_runners_memory_is_unchanged_by_what_a_command_prints(door, tmp_path):
    if door == "package":
        quiet = _package(tmp_path, "echo hello", capture=False)
        loud = _package(tmp_path, "\n".join(FLOOD), capture=False)
        run = [sys.executable, "-m", "env0_posttrain.tasks", "env0"]
        base, flood = (_maxrss_kb([*run, str(p), "--oracle"], tmp_path) for p in (quiet, loud))
    else:
        run = [sys.executable, "-c", RSS_SCRIPT]
        base, flood = (_maxrss_kb([*run, *cmds], tmp_path) for cmds in (["echo hello"], list(FLOOD)))
    assert base[0] == 0 and flood[0] == 0, (base, flood)
    assert flood[1] - base[1] < 64 * 1024, (base, flood)  # KiB: the outputs were 1.2 GB


# -- teardown, kernel state, writable space: each attack also through a round of episodes ----------------------
ENV0_ROOT = FIXTURES / "env0_root"


class ByStep:
    """A scripted model: the reply for the episode's n-th turn (each episode of a round gets the same script)."""

    def __new__(cls, replies):
        from env0_posttrain.agent.providers.base import Env0Provider, fill_response

        class _ByStep(Env0Provider):
            async def respond(self, model, messages, options, meta, model_response):
                n = sum(m["role"] == "assistant" for m in messages)
                return fill_response(model_response, model, replies[min(n, len(replies) - 1)])
        return _ByStep()


def _terminal(cmd: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": f"t{uuid.uuid4().hex[:6]}", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": cmd, "timeout": 60})}}]}


def _assert_round_counts(summary, episodes, n: int) -> None:
    """The round goes on: every episode played is stored (none counted as failed here), each once, none failed by
    the harness."""
    assert summary.played == n == summary.completed == len(episodes), summary
    assert summary.counted_failed == 0 and summary.crashed == [] and summary.harness_failures == {}, summary
    assert len({e.key for e in episodes}) == n
    assert summary.completed + summary.counted_failed == summary.played


def shell_round(script: str, limits: ShellSpec = LIMITS) -> list:
    """Two episodes of built-in tasks on the shell surface, each running `script`, then `echo alive`, then ending."""
    from env0_posttrain.agent import AgentSettings, run_rollouts_sync
    from env0_posttrain.agent.endpoint import ModelEndpoint
    from env0_posttrain.agent.llm import register_provider
    from env0_posttrain.tasks import generate_tasks

    tasks = generate_tasks(0, per_template=1)[:2]
    name = f"env0-attack{uuid.uuid4().hex[:6]}"
    register_provider(name, ByStep([_terminal(script), _terminal("echo alive"),
                                    {"role": "assistant", "content": "done"}]))
    settings = AgentSettings(max_steps=4, surface="shell", shell=limits, concurrency=2)
    eps: list = []
    summary = run_rollouts_sync(tasks, "base", 1, ModelEndpoint(model=f"{name}/m"), settings, "attack", set(),
                                eps.append, progress=False)
    _assert_round_counts(summary, eps, len(tasks))
    for ep in eps:  # the next command of each episode answered
        tool = [m["content"] for m in ep.messages if m["role"] == "tool"]
        assert len(tool) == 2 and tool[1].startswith("alive"), tool
    return eps


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A folder of packages with the clean fixture imported as a task (the hostile ones join it per test)."""
    from env0_posttrain.tasks.env0.corpus.importer import import_package

    src = tmp_path_factory.mktemp("corpus")
    shutil.copytree(FIXTURE, src / "env0_invoice")
    return src, import_package(src / "env0_invoice", src, env0_root=ENV0_ROOT)


def package_round(corpus, script: str) -> list:
    """A hostile package whose test.sh runs `script` before writing reward 1, imported as a task, then a round of
    the oracle teacher over it and the clean fixture: each episode judged by its package's test.sh."""
    from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
    from env0_posttrain.agent.environment import WorkspaceEnv
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.task_paths import TaskPaths

    src, clean = corpus
    pkg = src / f"hostile-{uuid.uuid4().hex[:8]}"
    shutil.copytree(FIXTURE, pkg)
    (pkg / "tests" / "attack.sh").write_text(script + "\n")
    (pkg / "tests" / "test.sh").write_text(TEST_SH.replace("{after}", "bash /tests/attack.sh"))
    hostile = import_package(pkg, src, env0_root=ENV0_ROOT)  # its test.sh ran twice already (oracle, no-op)
    eps: list = []
    summary = run_rollouts_sync([hostile, clean], "teacher", 1, oracle_endpoint(skill=1.0),
                                AgentSettings(max_steps=40, concurrency=2), "attack", set(), eps.append, progress=False,
                                env=WorkspaceEnv(TaskPaths(ENV0_ROOT, src)))
    _assert_round_counts(summary, eps, 2)
    assert all(e.passed for e in eps), [(e.task_id, e.stop_condition, e.error) for e in eps]  # test.sh went on
    return eps


@pytest.fixture()
def roots(monkeypatch):
    """The folders of the sandboxes made during the test."""
    from env0_posttrain.sandbox.box import Sandbox

    made: list[Path] = []
    real = Sandbox._lay_out

    def lay_out(self):
        real(self)
        made.append(self.root)
    monkeypatch.setattr(Sandbox, "_lay_out", lay_out)
    return made


TREE = """python3 - <<'PY'
import os, socket
for top in ("/tmp", "/logs/agent", "/data"):
    fd = os.open(top, os.O_RDONLY)
    for _ in range(1500):  # past Python's recursion limit: the close used to raise RecursionError
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
os.mkfifo("/tmp/fifo")
socket.socket(socket.AF_UNIX).bind("/tmp/sock")
os.symlink("loop", "/tmp/loop")
os.symlink("/", "/logs/agent/root")
os.makedirs("/tmp/locked/inner/x")
os.chmod("/tmp/locked/inner", 0)
os.chmod("/tmp/locked", 0o500)
print("tree-built")
PY"""


@pytest.mark.parametrize("door", DOORS)
def test_a_tree_no_recursive_walk_survives_is_torn_down_and_the_round_goes_on(door, tmp_path, task, roots, corpus):
    from env0_posttrain.util.tree_removal import leftovers

    out, then = attack(door, TREE, tmp_path, task, after="ls /tmp")
    assert "tree-built" in out and "fifo" in then  # the next command saw the tree and answered
    eps = shell_round(TREE) if door == "shell" else package_round(corpus, TREE)
    assert all(e.error_counts.get("sandbox_teardown_left") is None for e in eps)
    assert roots and [r for r in roots if r.exists()] == [] and not set(map(str, roots)) & set(leftovers())


HOST_TREE = """python3 - <<'PY'
import os
tmp = os.environ["TMPDIR"]
fd = os.open(tmp, os.O_RDONLY)
for _ in range(1500):
    os.mkdir("d", dir_fd=fd)
    nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nxt
os.close(fd)
os.mkfifo(tmp + "/fifo")
os.symlink("/", tmp + "/root")
os.makedirs(tmp + "/locked/inner/x")
os.chmod(tmp + "/locked/inner", 0)
PY"""


def test_an_unconfined_package_leaving_a_deep_tree_still_writes_its_reward_and_leaves_nothing(tmp_path, roots,
                                                                                              monkeypatch):
    """Unconfined (ENV0_SANDBOX=unconfined) the tree is on the host's disk: the teardown removes it all the same."""
    monkeypatch.setenv("ENV0_SANDBOX", "unconfined")
    pkg = _package(tmp_path, HOST_TREE, "#!/usr/bin/env bash\necho '{\"reward\": 1.0}' > \"$LOGS_DIR/reward.json\"\n",
                   capture=False)
    rc, reward = _cli(pkg, tmp_path / "reward.json")
    assert (rc, reward) == (0, {"reward": 1.0}), reward
    assert roots and [r for r in roots if r.exists()] == []


def _syscalls() -> dict[str, int]:
    import pyseccomp as sc

    names = ("keyctl", "add_key", "request_key", "unshare", "mount", "io_uring_setup", "perf_event_open",
             "process_vm_readv", "ptrace", "kcmp", "clone", "clone3", "setns", "bpf")
    return {n: int(sc.resolve_syscall(sc.system_arch(), n)) for n in names}


KERNEL = """python3 - <<'PY'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
nr = {numbers}
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr[name.split("/")[0]], *args)
    e = ctypes.get_errno()
    print(name, "REFUSED " + errno.errorcode.get(e, str(e)) if r < 0 else "RAN", flush=True)
    return r
buf = ctypes.create_string_buffer(256)
call("keyctl/read", 11, {kid}, buf, 256)
call("keyctl/search", 10, -3, b"user", b"{desc}", 0)
call("keyctl/join", 1, None)
call("add_key/session", b"user", b"planted-by-a-command", b"x", 1, -3)
call("add_key/user", b"user", b"planted-by-a-command", b"x", 1, -4)
call("request_key", b"user", b"{desc}", None, 0)
call("unshare/user", 0x10000000)
call("unshare/net", 0x40000000)
call("setns", 0, 0)
call("mount", b"none", b"/tmp", b"tmpfs", 0, None)
call("io_uring_setup", 1, None)
call("perf_event_open", None, 0, -1, -1, 0)
call("process_vm_readv", os.getpid(), None, 0, None, 0, 0)
call("ptrace/traceme", 0, 0, 0, 0)
call("kcmp", os.getpid(), os.getpid(), 0, 0, 0)
call("bpf", 0, None, 0)
if call("clone/newnet", 0x40000000 | 17, 0, 0, 0, 0) == 0:
    os._exit(0)
call("clone3", None, 0)
print("payload-seen" if b"{payload}" in buf.raw else "payload-unseen")
PY
grep Seccomp /proc/self/status; cat /proc/keys /proc/key-users; echo kernel-end"""


@pytest.mark.parametrize("door", DOORS)
def test_no_kernel_state_is_shared_keyrings_and_the_calls_docker_blocks_are_refused(door, tmp_path, task, corpus):
    """The runner's session keyring holds a secret; a command can neither read it nor see it listed, cannot add a
    key a later sandbox would find, and every call of Docker's blocked list answers EPERM (clone3 ENOSYS) from
    the filter, not from the kernel (without the filter several of these run or fail otherwise)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    nr = _syscalls()
    desc, payload = f"env0-runner-secret-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    assert libc.syscall(nr["keyctl"], 1, None) > 0  # this process: a session keyring of its own, for the test
    kid = libc.syscall(nr["add_key"], b"user", desc.encode(), payload.encode(), len(payload), -3)
    assert kid > 0
    script = KERNEL.format(numbers=json.dumps(nr), kid=kid, desc=desc, payload=payload)
    out, then = attack(door, script, tmp_path, task, after="cat /proc/keys; echo next-answered")
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line and not line.startswith(("Seccomp", " ")))
    refused = {k: v for k, v in lines.items() if "/" in k or k in nr}
    assert refused.pop("clone3") == "REFUSED ENOSYS", out
    assert set(refused.values()) == {"REFUSED EPERM"} and len(refused) == 17, out
    assert "payload-unseen" in out and payload not in out + then and desc not in out + then
    assert "Seccomp:\t2" in out and "kernel-end" in out and then.startswith("next-answered")  # /proc/keys: empty
    assert "planted-by-a-command" not in Path("/proc/keys").read_text()  # nothing was added where the host sees
    eps = shell_round(script) if door == "shell" else package_round(corpus, script)
    seen = [m["content"] for e in eps for m in e.messages if m["role"] == "tool"] if door == "shell" else \
        [e.verifier.detail for e in eps if e.task_id.startswith("env0-hostile")]  # test.sh's reward.json: its output
    assert seen and all("payload-unseen" in s for s in seen[::2 if door == "shell" else 1]), seen
    assert payload not in json.dumps(seen) and desc not in json.dumps(seen)


WRITABLE = ShellSpec(timeout_s=30, max_timeout_s=60, output_cap=20000, max_processes=48, max_memory_mb=512,
                     max_writable_mb=64, max_writable_files=2000)
FILL = """cd /tmp
head -c 256M /dev/zero > /tmp/big; rc=$?; size=$(stat -c %s /tmp/big); rm -f /tmp/big
echo big-rc=$rc big-size=$size
python3 -c "
import os, errno
made = 0
try:
    for i in range(20000):
        open(f'/logs/agent/f{i}', 'w').close()
        made += 1
except OSError as e:
    print('files-stopped', errno.errorcode[e.errno])
print('files-made', made)
"
rm -f /logs/agent/f*
df -k /tmp | tail -1
echo fill-end"""


@pytest.mark.parametrize("door", DOORS)
def test_the_writable_space_has_a_total_size_and_file_count_cap(door, tmp_path, task, monkeypatch, corpus):
    """256 MiB and 20,000 files asked for, with the spec's caps at 64 MiB and 2,000: the command gets 'No space left
    on device' at the caps, nothing lands on the host's disk, the next command answers and the round goes on."""
    host_bytes: list[int] = []

    def host_usage(root: Path) -> int:
        return sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(root) for f in fs)

    from env0_posttrain.sandbox.box import Sandbox

    real_exit = Sandbox.__exit__

    def measure_then_exit(self, *exc):
        host_bytes.append(host_usage(self.root))  # the sandbox's folder on the host, while it still runs
        return real_exit(self, *exc)
    monkeypatch.setattr(Sandbox, "__exit__", measure_then_exit)
    out, then = attack(door, FILL, tmp_path, task, limits=WRITABLE, monkeypatch=monkeypatch if door == "package"
                       else None, after="echo written > /tmp/after && cat /tmp/after")
    size = int(out.split("big-size=")[1].split()[0])
    assert "big-rc=0" not in out and 60 << 20 <= size <= 64 << 20, out  # stopped at the cap, not at 256 MiB
    made = int(out.split("files-made ")[1].split()[0])
    assert "files-stopped ENOSPC" in out and 1900 < made < 2000, out
    assert "fill-end" in out and then.startswith("written")  # space freed by rm: the next command writes again
    assert host_bytes and max(host_bytes) < 1 << 20, host_bytes  # the 64 MiB never reached the host's disk
    if door == "shell":
        shell_round(FILL, WRITABLE)
    else:
        from env0_posttrain.sandbox import box as sandbox_mod

        small = sandbox_mod.SandboxLimits(writable_mb=64, writable_files=2000)
        monkeypatch.setattr(sandbox_mod, "SandboxLimits", lambda: small)
        eps = package_round(corpus, FILL)
        assert all(e.passed for e in eps)
