"""Real agent-loop episodes (the oracle teacher with mistakes and a steering prompt) through the sft path."""

from __future__ import annotations

import asyncio

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_episode
from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft import (
    build_tito_rows,
    convert_both,
    drift_check,
    expected_episodes,
    results_row,
    validate_file,
    validate_rows,
    write_results_jsonl,
)
from env0_posttrain_tests.support.agent import NotesEnv, notes_task
from env0_posttrain_tests.sft.test_support import tiny_tokenizer

STEER = "Always list notes first."


def _episodes(n=24, skill=0.6):
    tasks = [notes_task(i, answer=(i % 3 == 0)) for i in range(n)]
    settings = AgentSettings(backoff_base_s=0.001, backoff_max_s=0.002, steering_prompt=STEER)

    async def go():
        return [await run_episode(t, oracle_endpoint(skill=skill), settings, "teacher", 0, "run-x", env=NotesEnv())
                for t in tasks]

    return tasks, asyncio.run(go())


def test_agent_episodes_become_valid_rows_and_every_episode_is_accounted_for(tmp_path):
    tasks, episodes = _episodes()
    rows = [results_row(e, t) for e, t in zip(episodes, tasks)]
    path = tmp_path / "results.jsonl"
    write_results_jsonl(rows, path)
    assert validate_file(path).ok  # mistakes are recorded faithfully, as not training-ready

    not_ready = [r for r in rows if not r.info.training_ready]
    assert not_ready, "skill 0.6 makes unknown-tool / malformed-call mistakes"
    assert all(r.info.training_ready_reason.startswith("invalid ") for r in not_ready)

    policy = SFTDataPolicy(min_reward=1.0)
    expected = expected_episodes(rows, policy)
    prime, trl, report = convert_both(path, policy, tokenizer=tiny_tokenizer(), max_seq_length=8192,
                                      expected_episodes=expected)
    assert report.curation.n_kept_episodes == expected == len(prime) == len(trl)
    assert report.skipped["not_training_ready"] == len(not_ready)
    assert sum(report.skipped.values()) + expected == len(episodes)
    assert all(r.reward == 1.0 for r in prime)
    assert all(STEER not in (m.get("content") or "") for r in trl for m in r.messages)
    assert validate_rows([*prime, *trl]).ok


def test_agent_episodes_give_retokenised_tito_rows_and_have_no_ids_to_drift(tmp_path):
    tasks, episodes = _episodes(n=6, skill=1.0)
    path = tmp_path / "results.jsonl"
    write_results_jsonl([results_row(e, t) for e, t in zip(episodes, tasks)], path)
    tok = tiny_tokenizer()
    rows, report = build_tito_rows(path, SFTDataPolicy(), tokenizer=tok)
    assert {r.origin for r in rows} == {"retokenised"} and report.curation.n_kept_episodes == 6
    turns = sum(sum(m["role"] == "assistant" for m in e.messages) for e in episodes)
    assert len(rows) == turns
    drift = drift_check(path, tok)
    assert drift.ok and drift.n_exchanges_checked == 0 and drift.n_exchanges_without_ids == turns
