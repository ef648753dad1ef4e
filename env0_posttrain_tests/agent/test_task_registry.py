"""The offline oracle finds the task it answers: from the harness, in the call's metadata (nothing registered,
nothing left behind); for a caller outside the harness, by instruction, only inside a `serve_tasks` block."""

from __future__ import annotations

import asyncio

import litellm
import pytest

from env0_posttrain.agent import AgentSettings, install_oracle, oracle_endpoint, run_episode, serve_tasks
from env0_posttrain.agent import task_registry
from env0_posttrain_tests.support.agent import NotesEnv, notes_task


def _unknown(task) -> bool:
    try:
        task_registry.lookup({}, task.instruction)
    except KeyError:
        return True
    return False


def test_the_harness_hands_the_oracle_its_task_and_leaves_nothing_registered():
    task = notes_task(2, answer=True)
    ep = asyncio.run(run_episode(task, oracle_endpoint(skill=1.0), AgentSettings(), "teacher", 0, "r", env=NotesEnv()))
    assert ep.passed and ep.final_answer == "1"
    assert _unknown(task)  # the episode's task was never put in a process-wide table


def test_a_caller_outside_the_harness_is_served_by_instruction_only_inside_the_block():
    install_oracle()
    first, second = notes_task(1, answer=True), notes_task(3, answer=True)
    messages = [{"role": "user", "content": first.instruction}]
    with pytest.raises(KeyError, match="serve_tasks"):
        task_registry.lookup({}, first.instruction)
    with serve_tasks([first]):
        with serve_tasks([second]):
            assert task_registry.lookup({}, second.instruction) is second
            assert task_registry.lookup({}, first.instruction) is first  # the outer block is still open
        assert _unknown(second) and not _unknown(first)
        reply = asyncio.run(litellm.acompletion(model="env0-oracle/oracle", messages=messages, tools=NotesEnv(
        ).openai_tools(first.tools)))  # litellm called directly: no metadata, the served task by its instruction
        assert reply.choices[0].message.tool_calls[0].function.name == first.oracle[0].name
    assert _unknown(first)
