"""A rollout of the local student batches the same requests together however long its tools and verifiers take:
episodes play in lanes and a batch waits for every live lane, so the rows (and with them the numbers a row gets)
do not depend on the machine's load."""

from __future__ import annotations

import random
import time

import pytest

from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model, run_rollouts_sync
from env0_posttrain.agent.providers.local_model import LocalModel, local_model
from env0_posttrain_tests.support.agent import NotesEnv, build_tiny_student, notes_task


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-student")
    build_tiny_student(path)
    return register_local_model("lockstep", path, max_batch_size=2)


class JitteryEnv(NotesEnv):
    """Verifiers (run in threads) that take a random while: what a loaded machine does to a rollout's timing."""

    def __init__(self, seed: int):
        super().__init__()
        self.rng = random.Random(seed)

    def verify(self, task, start, end, final_answer):
        time.sleep(self.rng.uniform(0.0, 0.04))
        return super().verify(task, start, end, final_answer)


def batches_of_a_rollout(model: str, seed: int) -> tuple[list, list]:
    seen: list[list[tuple[str, int]]] = []
    real = LocalModel.generate_batch

    def recording(self, requests):
        seen.append([(r.messages[1]["content"], len(r.messages)) for r in requests])
        return real(self, requests)

    local_model("lockstep").clear_prefix_cache()  # both rollouts start from the same state
    episodes = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LocalModel, "generate_batch", recording)
        run_rollouts_sync([notes_task(i) for i in range(5)], "base", 1, ModelEndpoint(model=model, max_tokens=6),
                          AgentSettings(max_steps=3, system_prompt="Use the tools.", concurrency=3), "r", set(),
                          episodes.append, env=JitteryEnv(seed), progress=False)
    replies = sorted((e.task_id, [x.completion_token_ids for x in e.exchanges]) for e in episodes)
    return seen, replies


def test_a_rollouts_batches_and_replies_do_not_depend_on_timing(tiny):
    first, replies = batches_of_a_rollout(tiny, 1)
    second, replies_again = batches_of_a_rollout(tiny, 2)
    assert first == second and replies == replies_again
    # three lanes, batches of at most 2: each tick runs as lane 0 and 1, then lane 2
    lanes = [notes_task(i).instruction for i in range(3)]
    assert first[0] == [(lanes[0], 2), (lanes[1], 2)] and first[1] == [(lanes[2], 2)]
    assert local_model("lockstep").stats.requests == 2 * sum(map(len, first))


class WaitingVerifierEnv(NotesEnv):
    """Task 0's verifier waits until the model has been asked for lane 0's next episode (task 3): it can only
    finish on its own if the lane moved on while it was still being verified."""

    def __init__(self):
        super().__init__()
        import threading

        self.next_asked = threading.Event()
        self.released_by_the_lane = None

    def verify(self, task, start, end, final_answer):
        if task.instruction == notes_task(0).instruction:
            self.released_by_the_lane = self.next_asked.wait(timeout=60)  # failsafe only
        return super().verify(task, start, end, final_answer)


def test_a_lane_moves_to_its_next_episode_while_the_last_one_is_verified(tiny):
    env = WaitingVerifierEnv()
    real = LocalModel.generate_batch

    def watching(self, requests):
        if any(r.messages[1]["content"] == notes_task(3).instruction for r in requests):
            env.next_asked.set()
        return real(self, requests)

    episodes = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LocalModel, "generate_batch", watching)
        run_rollouts_sync([notes_task(i) for i in range(5)], "base", 1, ModelEndpoint(model=tiny, max_tokens=6),
                          AgentSettings(max_steps=2, system_prompt="Use the tools.", concurrency=3), "r", set(),
                          episodes.append, env=env, progress=False)
    assert env.released_by_the_lane is True and len(episodes) == 5
