"""The shell surface's logic: OpenHands' tool shapes, the oracle playing solve.sh / HTTP commands through
`terminal` and ending with `finish`, the no-op, the episode's surface in rows, reports and specs. Commands run
through a host stand-in for the sandbox here (support/shell.py); agent/shell/test_confinement.py uses the real one."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_episode, run_rollouts_sync
from env0_posttrain.agent.llm import register_provider
from env0_posttrain.agent.shell.oracle import command_for_call, shell_commands
from env0_posttrain.agent.shell.session import render
from env0_posttrain.agent.shell.tools import shell_tool_defs, tools_for_surface
from env0_posttrain.evaluate.surfaces import arm_surfaces
from env0_posttrain.spec.runspec import SpecError, parse_spec
from env0_posttrain.sft import convert_rows, results_row, validate_rows
from env0_posttrain_tests.support.shell import Result, use_host_sandbox
from env0_posttrain_tests.agent.test_loop import Scripted
from env0_posttrain_tests.sft.test_support import tiny_tokenizer
from env0_posttrain_tests.support.paths import FIXTURES

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("curl") is None,
                                reason="the shell surface runs bash and curl")
SHELL = AgentSettings(max_steps=40, concurrency=4, surface="shell", backoff_base_s=0.001, backoff_max_s=0.002)


@pytest.fixture(scope="module")
def builtin_tasks():
    from env0_posttrain.tasks import generate_tasks

    tasks = generate_tasks(0, per_template=1)
    by_service: dict[str, list] = {}
    for t in tasks:  # a few tasks of every service the oracle calls, Slack and the Admin API included
        for s in {c.name.split("_")[0] for c in t.oracle}:
            by_service.setdefault(s, []).append(t)
    return list({t.id: t for group in by_service.values() for t in group[:2]}.values())


@pytest.fixture(scope="module")
def env0_tasks(tmp_path_factory):
    """(two imported env0 tasks, the harness environment that knows where their packages are)."""
    from env0_posttrain.agent.environment import WorkspaceEnv
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.task_paths import TaskPaths

    src = tmp_path_factory.mktemp("corpus")
    for name in ("env0_invoice", "env0_archive"):
        shutil.copytree(FIXTURES / name, src / name)
    paths = TaskPaths(FIXTURES / "env0_root", src)
    tasks = [import_package(src / name, src, env0_root=paths.env0_root) for name in ("env0_invoice", "env0_archive")]
    return tasks, WorkspaceEnv(paths)


def test_the_tools_have_the_pinned_openhands_names_and_parameters():
    terminal, finish = shell_tool_defs()
    t, f = terminal["function"], finish["function"]
    assert (t["name"], f["name"]) == ("terminal", "finish")
    assert set(t["parameters"]["properties"]) == {"command", "is_input", "timeout", "reset", "summary"}
    assert t["parameters"]["required"] == ["command"]
    kinds = {k: v["type"] for k, v in t["parameters"]["properties"].items()}
    assert kinds == {"command": "string", "is_input": "boolean", "timeout": "number", "reset": "boolean",
                     "summary": "string"}
    assert set(f["parameters"]["properties"]) == {"message", "summary"} and f["parameters"]["required"] == ["message"]
    api = [{"type": "function", "function": {"name": "gmail_messages_list", "parameters": {}}}]
    assert tools_for_surface("tools", api) == api
    assert [x["function"]["name"] for x in tools_for_surface("both", api)] == ["gmail_messages_list", "terminal", "finish"]
    with pytest.raises(ValueError, match="unknown agent surface"):
        tools_for_surface("gui", api)


def test_builtin_oracle_calls_become_gws_and_curl_commands():
    assert command_for_call("gmail_messages_list", {"q": "from:a@b.c"}) == \
        "gws gmail users messages list --params '{\"q\": \"from:a@b.c\"}'"
    slack = command_for_call("slack_chat_postMessage", {"channel": "C1", "text": "it's done"})
    assert slack.startswith('curl -sS -X POST "$SLACK_URL/api/chat.postMessage"') and "it'\"'\"'s done" in slack


def test_the_oracle_passes_builtin_tasks_through_terminal_commands(builtin_tasks):
    eps: list = []
    with use_host_sandbox() as runners:
        s = run_rollouts_sync(builtin_tasks, "teacher", 1, oracle_endpoint(skill=1.0), SHELL, "sh", set(), eps.append,
                              progress=False)
    assert s.passed == s.completed == len(builtin_tasks), [(e.task_id, e.verifier) for e in eps if not e.passed]
    assert s.surface == "shell" and all(e.surface == "shell" for e in eps)
    by_id = {t.id: t for t in builtin_tasks}
    for ep in eps:
        calls = [c["function"] for m in ep.messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        assert [c["name"] for c in calls] == ["terminal"] * len(by_id[ep.task_id].oracle) + ["finish"]
        assert ep.final_answer == json.loads(calls[-1]["arguments"])["message"]
        assert all(m["content"].endswith("[Exit code 0]") for m in ep.messages if m["role"] == "tool"
                   and m["name"] == "terminal")
    assert sum(len(r.commands) for r in runners) == sum(len(t.oracle) for t in builtin_tasks)


def test_both_offers_the_api_tools_and_the_shell_and_the_oracle_keeps_to_the_api(builtin_tasks):
    task = builtin_tasks[0]
    both = SHELL.model_copy(update={"surface": "both"})
    with use_host_sandbox() as runners:
        ep = asyncio.run(run_episode(task, oracle_endpoint(skill=1.0), both, "teacher", 0, "both"))
    names = [t["function"]["name"] for t in ep.tools]
    assert names[-2:] == ["terminal", "finish"] and set(names[:-2]) == set(task.tools)
    assert ep.passed and ep.surface == "both" and runners == []  # API calls only: no sandbox was started


def test_the_oracle_plays_an_env0_packages_solve_sh_as_one_command_and_the_noop_stays_0(env0_tasks):
    env0_tasks, env = env0_tasks
    eps: list = []
    with use_host_sandbox() as runners:
        s = run_rollouts_sync(env0_tasks, "teacher", 1, oracle_endpoint(skill=1.0), SHELL, "sh", set(), eps.append,
                              progress=False, env=env)
        assert s.passed == len(env0_tasks), [(e.task_id, e.verifier) for e in eps]
        for ep in eps:
            calls = [c["function"] for m in ep.messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
            task = next(t for t in env0_tasks if t.id == ep.task_id)
            assert [c["name"] for c in calls] == ["terminal", "finish"]
            assert json.loads(calls[0]["arguments"])["command"] == shell_commands(task, env.paths)[0]
            assert shell_commands(task, env.paths)[0].startswith("#!")  # the script itself, verbatim
        # the no-op: finish at once; the package's own verifier gives 0
        register_provider("env0-shellnoop", Scripted([{"role": "assistant", "content": None, "tool_calls": [
            {"id": "f", "type": "function", "function": {"name": "finish", "arguments": '{"message": "nothing"}'}}]}]))
        from env0_posttrain.agent.endpoint import ModelEndpoint

        noop = [asyncio.run(run_episode(t, ModelEndpoint(model="env0-shellnoop/x"), SHELL, "teacher", 0, "sh",
                                        env=env)) for t in env0_tasks]
    assert [e.reward for e in noop] == [0.0] * len(env0_tasks)
    assert all(e.stop_condition == "agent_completed" and e.final_answer == "nothing" for e in noop)
    assert len(runners) == len(env0_tasks)  # no command, no sandbox: the no-op episodes started none


def test_shell_rows_convert_and_validate_like_tool_rows(env0_tasks):
    env0_tasks, env = env0_tasks
    with use_host_sandbox():
        eps = [asyncio.run(run_episode(t, oracle_endpoint(skill=1.0), SHELL, "teacher", 0, "rows", env=env))
               for t in env0_tasks]
    rows = [results_row(e, t).model_dump(mode="json") for e, t in zip(eps, env0_tasks)]
    from env0_posttrain.spec.runspec import SFTDataPolicy

    prime, _ = convert_rows(rows, SFTDataPolicy())
    trl, _ = convert_rows(rows, SFTDataPolicy(), fmt="trl", tokenizer=tiny_tokenizer(), max_seq_length=8192)
    assert len(prime) == len(trl) == len(rows) and validate_rows([*prime, *trl]).ok
    assert all(r["info"]["surface"] == "shell" for r in rows)
    assert all({t["function"]["name"] for t in r["tool_defs"]} == {"terminal", "finish"} for r in rows)


def test_a_result_says_what_confinement_did_and_counts_it():
    out = render(Result(returncode=-9, stdout="partial", stderr="", timed_out=True), 2.0, 100)
    assert "stopped after 2 s" in out.text and out.events == {"shell_timeout": 1} and "Exit code" not in out.text
    out = render(Result(returncode=7, stdout="", stderr="curl: (7) Failed to connect: Network is unreachable"), 5, 100)
    assert out.events == {"shell_network_refused": 1} and out.text.endswith("[Exit code 7]")
    out = render(Result(returncode=1, stdout="x" * 100, stderr="", truncated=True), 5, 100)
    assert out.events == {"shell_output_cut": 1} and "cut at 100 characters" in out.text
    out = render(Result(returncode=0, stdout="", stderr=""), 5, 100, pids_refused=3)
    assert out.events == {"shell_process_limit": 1}


def test_specs_refuse_arms_on_different_surfaces_unless_asked():
    base = {"run_id": "s", "teacher": {"surface": "shell"}}
    with pytest.raises(SpecError, match="compare_across_surfaces"):
        parse_spec(base)
    spec = parse_spec({**base, "compare_across_surfaces": True})
    assert spec.surface_line() == "teacher, teacher_eval: shell; base, sft, rl: tools (compared as asked)"
    assert parse_spec({"run_id": "s", "teacher": {"surface": "shell"}, "eval": {"surface": "shell"}}).surface_line() \
        == "every arm: shell"


def test_the_report_refuses_to_compare_arms_that_used_different_surfaces():
    from env0_posttrain_tests.sft.test_support import make_episode

    a = make_episode(0).model_copy(update={"arm": "base"})
    b = make_episode(1).model_copy(update={"arm": "teacher_eval", "surface": "shell"})
    with pytest.raises(ValueError, match="compare_across_surfaces"):
        arm_surfaces([a, b], compare_across=False)
    assert arm_surfaces([a, b], compare_across=True) == {"base": "tools", "teacher_eval": "shell"}
