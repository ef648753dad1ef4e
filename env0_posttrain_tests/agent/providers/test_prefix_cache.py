"""The local student's prefix cache: a request prefills only what no cached prompt had, batched rows with different
cached lengths decode what they would decode without the cache, and the reuse reaches the episode's token usage."""

from __future__ import annotations

import asyncio

import pytest

from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model, run_episode
from env0_posttrain.agent.providers.local_model import GenRequest, LocalModel, local_model
from env0_posttrain.agent.providers.prefix_cache import PrefixCache, supports_prefix_cache
from env0_posttrain_tests.support.agent import NotesEnv, build_tiny_student, notes_task


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-student")
    build_tiny_student(path)
    return path


def conversation(i: int, steps: int) -> list[dict]:
    """An episode's messages after `steps` tool calls: each step's prompt extends the one before."""
    msgs = [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": f"Create note {i}." * (1 + i)}]
    for k in range(steps):
        call = {"id": f"c{k}", "type": "function", "function": {"name": "notes_create", "arguments": f'{{"title": "t{k}"}}'}}
        msgs += [{"role": "assistant", "content": None, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": f"c{k}", "name": "notes_create", "content": f'{{"ok": true, "id": "n{k}"}}' * (k + 1)}]
    return msgs


def test_rows_with_different_cached_prefixes_decode_as_without_the_cache_and_prefill_only_new_tokens(tiny_dir):
    tools = NotesEnv().openai_tools(["notes_create", "notes_list"])
    plain = LocalModel("plain", tiny_dir, prefix_cache_mb=0)
    cached = LocalModel("cached", tiny_dir)
    assert plain.prefix_cache is None and cached.prefix_cache is not None
    expected_prefill = 0
    seen: list[list[int]] = []
    for step in range(4):
        # episodes join at different steps, so one batch mixes rows with long, short and no cached prefix
        requests = [GenRequest(conversation(i, step - i), tools, 0.0, 1.0, 8) for i in range(min(step + 1, 3))]
        want = [r.completion_ids for r in plain.generate_batch(requests)]
        got = cached.generate_batch(requests)
        assert [r.completion_ids for r in got] == want
        for r in got:
            shared = max((_common(r.prompt_ids, s) for s in seen), default=0)
            assert r.cached_tokens == min(shared, len(r.prompt_ids) - 1)
            expected_prefill += len(r.prompt_ids) - r.cached_tokens
        seen += [r.prompt_ids for r in got]
    assert cached.stats.prefilled_tokens == expected_prefill < plain.stats.prefilled_tokens == plain.stats.prompt_tokens
    assert cached.stats.reused_tokens > cached.stats.prefilled_tokens  # most of every later step was already there


def _common(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_an_episode_reports_the_prompt_tokens_it_reused(tiny_dir):
    model = register_local_model("prefix-episode", tiny_dir)
    ep = asyncio.run(run_episode(notes_task(1), ModelEndpoint(model=model, max_tokens=4),
                                 AgentSettings(max_steps=3, system_prompt="Use the tools."), "base", 0, "r", env=NotesEnv()))
    assert ep.exchanges[0].usage.cached_tokens == 0  # nothing cached before the episode's first request
    assert all(0 < ex.usage.cached_tokens < ex.usage.prompt_tokens for ex in ep.exchanges[1:])
    assert ep.usage.cached_tokens == sum(ex.usage.cached_tokens for ex in ep.exchanges)
    stats = local_model("prefix-episode").stats
    assert stats.prefilled_tokens == ep.usage.prompt_tokens - ep.usage.cached_tokens


def test_the_cache_keeps_the_longest_prompts_within_its_budget():
    cache = PrefixCache(max_tokens=10)
    cache.put([1, 2, 3], ["kv-a"])
    cache.put([1, 2, 3, 4, 5], ["kv-b"])  # extends the first: replaces it
    assert len(cache) == 1 and cache.tokens == 5
    assert cache.longest([1, 2, 3, 4, 9]) == (cache.longest([1, 2, 3, 4, 5, 6])[0], 4)
    cache.put([7, 8, 9], ["kv-c"])
    assert cache.longest([7, 8])[1] == 2 and cache.longest([5])[1] == 0
    cache.longest([1, 2])  # touched: the most recently used
    cache.put([6, 6, 6], ["kv-d"])  # 11 tokens: the least recently used entry goes
    assert cache.tokens == 8 and cache.longest([7, 8, 9])[1] == 0 and cache.longest([1, 2, 3])[1] == 3
    cache.put(list(range(11)), ["too long"])
    assert cache.tokens == 8


def test_only_plain_attention_models_use_the_cache():
    from transformers import AutoConfig

    class Model:
        def __init__(self, config):
            self.config = config

    plain = AutoConfig.for_model("qwen3", hidden_size=32, num_hidden_layers=2, num_attention_heads=2)
    hybrid = AutoConfig.for_model("qwen3_5_text", hidden_size=32, num_hidden_layers=4, num_attention_heads=2,
                                  layer_types=["linear_attention"] * 3 + ["full_attention"])
    windowed = AutoConfig.for_model("qwen3", hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                    use_sliding_window=True, sliding_window=16, layer_types=["sliding_attention"] * 2)
    assert supports_prefix_cache(Model(plain))
    assert not supports_prefix_cache(Model(hybrid)) and not supports_prefix_cache(Model(windowed))
