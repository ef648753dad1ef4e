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

FIXTURE = Path(__file__).parent / "fixtures" / "env0_invoice"
WORKTREE = Path(__file__).resolve().parents[1]
LIMITS = ShellSpec(timeout_s=30, max_timeout_s=60, output_cap=20000, max_processes=48, max_memory_mb=128)
DOORS = ("package", "shell")


def _containment() -> str | None:
    try:
        from env0_posttrain.tasks.env0.sandbox import containment_problem
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
            from env0_posttrain.tasks.env0 import sandbox as sandbox_mod

            small = sandbox_mod.SandboxLimits(max_processes=limits.max_processes, memory_mb=limits.max_memory_mb)
            monkeypatch.setattr(sandbox_mod, "SandboxLimits", lambda: small)
        rc, reward = _cli(_package(tmp, script, after=after), tmp / "reward.json")
        assert rc == 0 and reward.get("reward") == 1.0, reward  # test.sh, the next command, ran after the attack
        if monkeypatch is not None:
            monkeypatch.undo()
        _runner_still_scores(tmp)
        return reward["obs"], reward["after"]
    from env0_posttrain.agent.shell_session import ShellSession
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
    from env0_posttrain.tasks.env0.sandbox_cgroup import SandboxCgroup

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
    from env0_posttrain.agent.shell_session import ShellSession
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
