"""The verifier runs off the event loop: other coroutines make progress while it works.

An env0 package's verifier runs tests/test.sh (about a second); on the loop it stalled every other
episode of the rollout. Each test's verifier waits until a coroutine on the loop has run: on the
loop that can never happen (the wait runs out and the test fails), off it the coroutine runs at once.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

import pytest

from env0_posttrain.agent import AgentSettings, ModelEndpoint, run_episode
from env0_posttrain.agent.llm import register_provider
from env0_posttrain.agent.providers.base import Env0Provider, fill_response
from env0_posttrain_tests.support.agent import NotesEnv, notes_task
from env0_posttrain_tests.support.paths import FIXTURES


class _Done(Env0Provider):
    async def respond(self, model, messages, options, meta, model_response):
        return fill_response(model_response, model, {"role": "assistant", "content": "done"})


class _Probe:
    """`wait_for_loop()` (in the verifier) blocks until `ticker()` (on the loop) has run once after it began."""

    def __init__(self) -> None:
        self.verifying = threading.Event()
        self.ticked = threading.Event()
        self.threads: list[int] = []

    def wait_for_loop(self) -> bool:
        self.threads.append(threading.get_ident())
        self.verifying.set()
        return self.ticked.wait(15)  # a bound, not a timing: on the loop it can never be set

    async def ticker(self) -> None:
        while not self.verifying.is_set():
            await asyncio.sleep(0.001)
        self.ticked.set()


async def _episode_beside(probe: _Probe, task, env=None):
    register_provider("env0-done", _Done())
    kwargs = {"env": env} if env is not None else {}
    ticker = asyncio.create_task(probe.ticker())
    ep = await run_episode(task, ModelEndpoint(model="env0-done/m"), AgentSettings(max_steps=2), "teacher", 0, "loop",
                           **kwargs)
    await asyncio.wait_for(ticker, 5)
    return ep, threading.get_ident()


def test_a_blocking_verifier_leaves_the_loop_free():
    probe = _Probe()

    class SlowEnv(NotesEnv):
        def verify(self, task, start, end, final_answer):
            assert probe.wait_for_loop(), "no coroutine ran while the verifier worked: it blocked the event loop"
            return super().verify(task, start, end, final_answer)

    ep, loop_thread = asyncio.run(_episode_beside(probe, notes_task(1), SlowEnv()))
    assert ep.stop_condition == "agent_completed" and ep.verifier is not None and ep.reward == 0.0
    assert probe.threads and probe.threads[0] != loop_thread


@pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None,
                    reason="env0 packages' scripts need bash and curl")
def test_an_env0_packages_test_sh_runs_while_the_loop_keeps_going(tmp_path: Path, monkeypatch):
    from env0_posttrain.agent.environment import WorkspaceEnv
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.task_paths import TaskPaths

    source = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "env0_invoice", source / "invoice")
    paths = TaskPaths(FIXTURES / "env0_root", source)
    task = import_package(source / "invoice", source, env0_root=paths.env0_root)

    probe = _Probe()
    from env0_posttrain.tasks.env0.judge import verifier as env0_judge
    real_run_script = env0_judge.run_script

    def run_script(step, script, *args, **kwargs):
        if step == "run tests/test.sh":
            assert probe.wait_for_loop(), "no coroutine ran while test.sh ran: the verifier blocked the event loop"
        return real_run_script(step, script, *args, **kwargs)

    monkeypatch.setattr(env0_judge, "run_script", run_script)
    ep, loop_thread = asyncio.run(_episode_beside(probe, task, WorkspaceEnv(paths)))
    assert ep.stop_condition == "agent_completed", ep.error
    assert ep.reward == 0.0 and ep.verifier is not None and "api_calls" in ep.verifier.detail  # the package judged
    assert probe.threads and probe.threads[0] != loop_thread
