"""The KV of recent prompts, found again by token ids: a request prefills only what no earlier prompt had.

An episode's prompt at step k+1 is its prompt at step k plus the reply and the tool results (the chat template
renders history the same way at every step), and every episode's prompt starts with the same system prompt and
tool list. So the longest prefix any cached prompt shares with a new one is usually the whole previous step:
without the cache an episode of 12 steps prefills its opening 12 times and step 1's tool result 11 times.

Only for models whose every layer is plain attention (a `DynamicLayer`): a recurrent layer (Gated DeltaNet)
keeps a state that cannot be cut at an arbitrary prefix, and a sliding window drops the start of the prompt.
Batches stay batched: each row's cached keys and values are right-aligned in one cache of the batch's longest
reused prefix, its new tokens are right-aligned after it, and the attention mask marks both gaps as padding, so
positions (the mask's running count) are those the tokens had when they were cached.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Entry:
    ids: list[int]
    kv: list[tuple[Any, Any]]  # per layer: keys, values as [kv_heads, len, head_dim]


@dataclass
class CacheStats:
    """Token counts since the model was loaded: `prefilled` is what the model computed, `reused` what it did not."""

    requests: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0
    generated_tokens: int = 0
    decode_steps: int = 0  # forward passes after the prefill: a batch runs until its longest reply ends
    generate_s: float = 0.0
    batches: list[int] = field(default_factory=list)

    @property
    def prefilled_tokens(self) -> int:
        return self.prompt_tokens - self.reused_tokens


def supports_prefix_cache(model: Any) -> bool:
    """True when every layer of the model's cache is plain attention that keeps the whole prompt."""
    config = getattr(model, "config", None)
    if config is None:
        return False
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    types = set(getattr(text, "layer_types", None) or ["full_attention"])
    return types == {"full_attention"} and not getattr(text, "sliding_window", None)


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class PrefixCache:
    """Least recently used prompts' KV, up to `max_tokens` tokens in all; a prompt that extends a cached one
    replaces it (an episode keeps one entry, its latest step)."""

    def __init__(self, max_tokens: int):
        self.max_tokens = max_tokens
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._next = 0
        self.tokens = 0

    def __len__(self) -> int:
        return len(self._entries)

    def longest(self, ids: list[int]) -> tuple[_Entry | None, int]:
        """The entry sharing the longest prefix with `ids`, and that length (0: none)."""
        best, best_n = None, 0
        for key, entry in self._entries.items():
            if entry.ids[:1] != ids[:1]:
                continue
            n = _common_prefix(entry.ids, ids)
            if n > best_n:
                best, best_n, best_key = entry, n, key
        if best is not None:
            self._entries.move_to_end(best_key)
        return best, best_n

    def put(self, ids: list[int], kv: list[tuple[Any, Any]]) -> None:
        if len(ids) > self.max_tokens:
            return
        for key in [k for k, e in self._entries.items() if len(e.ids) <= len(ids) and ids[: len(e.ids)] == e.ids]:
            self.tokens -= len(self._entries.pop(key).ids)  # a prefix of the new prompt: the new entry covers it
        self._entries[self._next] = _Entry(list(ids), kv)
        self._next += 1
        self.tokens += len(ids)
        while self.tokens > self.max_tokens:
            _, old = self._entries.popitem(last=False)
            self.tokens -= len(old.ids)

    def clear(self) -> None:
        self._entries.clear()
        self.tokens = 0


def batch_cache(hits: list[tuple[_Entry | None, int]], reused: int, max_len: int, config: Any, device: Any):
    """A StaticCache of `max_len` positions (decode writes in place instead of growing the cache by a copy every
    step) holding each row's first n_i cached keys/values right-aligned in its first `reused` positions."""
    import torch
    from transformers import StaticCache

    cache = StaticCache(config=config, max_cache_len=max_len)
    if not reused:
        return cache
    for layer in range(len(cache.layers)):
        sample = next(e.kv[layer][0] for e, n in hits if e is not None and n)
        heads, _, dim = sample.shape
        keys = torch.zeros((len(hits), heads, reused, dim), dtype=sample.dtype, device=device)
        values = torch.zeros_like(keys)
        for row, (entry, n) in enumerate(hits):
            if entry is not None and n:
                keys[row, :, reused - n:] = entry.kv[layer][0][:, :n]
                values[row, :, reused - n:] = entry.kv[layer][1][:, :n]
        cache.update(keys, values, layer)
    return cache


def row_kv(cache: Any, row: int, positions: Any) -> list[tuple[Any, Any]]:
    """Row `row`'s keys and values at `positions` of a batch's cache, copied out (the batch's tensors can go)."""
    return [(layer.keys[row][:, positions].clone(), layer.values[row][:, positions].clone()) for layer in cache.layers]
