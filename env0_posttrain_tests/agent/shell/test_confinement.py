"""The shell surface in the real package sandbox: a command's time limit and output cap; a command that tries a
non-loopback address, writes outside the sandbox, forks without end or sleeps forever is stopped and reported (in
the result the agent reads, and counted), and nothing outside the sandbox changes. Then the oracle end to end."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_episode, run_rollouts_sync
from env0_posttrain.agent.endpoint import ModelEndpoint
from env0_posttrain.agent.llm import register_provider
from env0_posttrain.agent.shell.session import ShellSession
from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain_tests.agent.test_loop import Scripted
from env0_posttrain_tests.support.paths import FIXTURES

LIMITS = ShellSpec(timeout_s=30, max_timeout_s=60, output_cap=2000, max_processes=48)


def _no_sandbox() -> str | None:
    if shutil.which("curl") is None:
        return "needs curl"
    from env0_posttrain.sandbox.box import containment_problem

    return containment_problem()


pytestmark = pytest.mark.skipif(_no_sandbox() is not None, reason=f"no confined sandbox here: {_no_sandbox()}")


@pytest.fixture(scope="module")
def task():
    from env0_posttrain.tasks import generate_tasks

    return generate_tasks(0, per_template=1)[0]


@pytest.fixture()
def session(task):
    from env0_posttrain.tasks import build_workspace

    s = ShellSession(task, build_workspace(task), LIMITS)
    yield s
    s.close()


def _procs(session: ShellSession) -> list[str]:
    return session.run("ps -eo comm=", 10).text.splitlines()[:-1]


def test_a_command_past_its_time_limit_is_stopped_with_everything_it_started(session):
    out = session.run("sleep 1000 & sleep 1000; echo never", 1)
    assert out.events == {"shell_timeout": 1} and "never" not in out.text
    assert "stopped after 1 s, its time limit" in out.text
    assert "sleep" not in _procs(session)
    session.run("true", 10)  # the killed command's processes are reaped, not left as zombies holding pids
    assert not [s for s in session.run("ps -eo stat=", 10).text.splitlines()[:-1] if s.strip().startswith("Z")]


def test_a_background_job_does_not_outlive_its_command(session):
    out = session.run("nohup sleep 1000 >/dev/null 2>&1 & setsid sleep 1000 & echo started", 10)
    assert out.text.startswith("started") and out.events == {}
    assert "sleep" not in _procs(session)


def test_output_beyond_the_cap_is_cut_and_said(session):
    out = session.run("yes abcdefgh | head -c 100000", 10)
    assert out.events == {"shell_output_cut": 1}
    assert "Output cut at 2000 characters" in out.text and len(out.text) < 2000 + 200


def test_the_output_is_cut_below_the_loops_message_cap_so_the_notes_stay(task):
    from env0_posttrain.tasks import build_workspace

    s = ShellSession(task, build_workspace(task), LIMITS.model_copy(update={"output_cap": 30000}), max_chars=1000)
    try:
        out = s.run("yes abcdefgh | head -c 100000; echo oops >&2", 10)
    finally:
        s.close()
    assert len(out.text) < 1000 and out.text.endswith("[Exit code 0]") and out.events == {"shell_output_cut": 1}


def test_only_loopback_is_reachable(session):
    assert '"status":"ok"' in session.run("curl -sS localhost:9001/health", 10).text
    out = session.run("curl -sS -m 5 http://10.255.255.1/ ; python3 -c \"import urllib.request as u; "
                      "u.urlopen('http://93.184.216.34/', timeout=5)\" 2>&1 | tail -1", 20)
    assert out.events == {"shell_network_refused": 1} and "Only the sandbox's loopback is reachable" in out.text


def test_writes_outside_the_sandbox_are_refused_and_nothing_outside_changes(session):
    host = Path(tempfile.mkdtemp(dir="/var/tmp"))  # a host folder (not in the sandbox's root at all)
    try:
        (host / "kept.txt").write_text("original\n")
        out = session.run(f"echo changed > {host}/kept.txt; touch {host}/new.txt; rm -f {host}/kept.txt; "
                          "mkdir /etc/env0-probe; echo inside > /tmp/env0-shell-probe && cat /tmp/env0-shell-probe", 10)
        assert out.events == {"shell_write_refused": 1} and "inside" in out.text
        assert (host / "kept.txt").read_text() == "original\n" and sorted(p.name for p in host.iterdir()) == ["kept.txt"]
        assert not Path("/etc/env0-probe").exists() and not Path("/tmp/env0-shell-probe").exists()  # /tmp is its own
        assert session.run("cat /tmp/env0-shell-probe", 10).text.startswith("inside")  # and stays for later commands
        assert session.run("ulimit -H -f", 10).text.startswith(str(1 << 20))  # files capped at 1 GiB (1024-byte blocks)
    finally:
        shutil.rmtree(host)


def test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing(session):
    if session.sandbox.cgroup is None:
        pytest.skip("no writable pids cgroup here: the process limit is not available")
    out = session.run(":(){ :|:& };:; sleep 2; echo survived", 20)
    assert out.events["shell_process_limit"] == 1 and "process limit refused new processes" in out.text
    assert session.run("echo fine", 10).text.startswith("fine")
    assert len(_procs(session)) <= 3  # bwrap, its shell and ps: the bomb is gone


def test_the_agent_reads_what_confinement_did_and_the_episode_counts_it(task):
    def terminal(cmd, **kw):
        return {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{len(cmd)}", "type": "function",
                "function": {"name": "terminal", "arguments": json.dumps({"command": cmd, **kw})}}]}

    register_provider("env0-shellprobe", Scripted([
        terminal("sleep 600", timeout=1), terminal("curl -sS -m 5 http://10.255.255.1/"),
        {"role": "assistant", "content": None, "tool_calls": [{"id": "f", "type": "function", "function": {
            "name": "finish", "arguments": '{"message": "gave up"}'}}]}]))
    settings = AgentSettings(max_steps=6, surface="shell", shell=LIMITS, backoff_base_s=0.001, backoff_max_s=0.002)
    ep = asyncio.run(run_episode(task, ModelEndpoint(model="env0-shellprobe/x"), settings, "base", 0, "probe"))
    tool = [m["content"] for m in ep.messages if m["role"] == "tool"]
    assert "stopped after 1 s" in tool[0] and "Only the sandbox's loopback is reachable" in tool[1]
    assert ep.error_counts == {"shell_timeout": 1, "shell_network_refused": 1}
    assert ep.stop_condition == "agent_completed" and ep.final_answer == "gave up" and ep.reward == 0.0


def test_the_oracle_passes_in_the_real_sandbox(monkeypatch, tmp_path):
    from env0_posttrain.tasks import generate_tasks
    from env0_posttrain.agent.environment import WorkspaceEnv
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.task_paths import TaskPaths

    src = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "env0_invoice", src / "env0_invoice")
    paths = TaskPaths(FIXTURES / "env0_root", src)
    tasks = [import_package(src / "env0_invoice", src, env0_root=paths.env0_root), *generate_tasks(0, per_template=1)[:3]]
    eps: list = []
    settings = AgentSettings(max_steps=40, concurrency=2, surface="shell", shell=LIMITS)
    s = run_rollouts_sync(tasks, "teacher", 1, oracle_endpoint(skill=1.0), settings, "sb", set(), eps.append,
                          progress=False, env=WorkspaceEnv(paths))
    assert s.passed == len(tasks), [(e.task_id, e.verifier, e.error) for e in eps if not e.passed]
    assert all(e.error_counts == {} for e in eps)
