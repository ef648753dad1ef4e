"""Greedy decoding of a batch whose rows leave it as they finish.

transformers' `generate` decodes every row until the batch's longest reply ends, and each step of a decoder reads
every row's whole KV cache: one 256-token reply kept fifteen finished rows of 2-3k tokens of context in every step
(the eval's decode was memory-bound on exactly that). Here a row that emits a stop token or reaches its own
`max_tokens` is dropped from the cache and the batch before the next step. The forward pass is the model's own and
the choice is `argmax` of the last position's logits, as `generate` does without logits processors, so the tokens are
the same; sampling (GRPO, temperature > 0) keeps `generate`.

A row whose last `repetition_window` tokens are one block of at most a quarter of that length over and over
(a base model's "— Q3 Planning — Q3 Planning — ..." until `max_tokens`) leaves too: greedy decoding in such a loop
rarely gets out, and every further token costs a decode step of the whole batch.
"""

from __future__ import annotations

from typing import Any, Callable


def repeats_itself(tokens: list[int], window: int) -> bool:
    """The last `window` tokens are one block of at most window // 4 tokens repeated (the last copy may be cut)."""
    if len(tokens) < window:
        return False
    tail = tokens[-window:]
    return any(tail[p:] == tail[:-p] for p in range(1, window // 4 + 1))


def greedy_decode(model: Any, input_ids: Any, attention: Any, cache: Any, reused: int, stop_ids: list[int],
                  max_tokens: list[int], on_prefill: Callable[[Any], None] | None = None,
                  repetition_window: int | None = None) -> tuple[list[list[int]], set[int]]:
    """Row i's completion (its stop token included), and the rows cut for repeating themselves. `cache` holds the
    first `reused` positions of every row; `on_prefill(cache)` sees the cache once the prompts are in it, before
    any row is dropped."""
    import torch

    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=input_ids[:, reused:], attention_mask=attention, position_ids=positions[:, reused:],
                past_key_values=cache, use_cache=True, logits_to_keep=1)
    if on_prefill is not None:
        on_prefill(cache)
    stops = torch.tensor(stop_ids, device=input_ids.device)
    completions: list[list[int]] = [[] for _ in range(input_ids.shape[0])]
    looped: set[int] = set()
    active = torch.arange(input_ids.shape[0], device=input_ids.device)  # batch row -> request index
    last = positions[:, -1]
    limits = torch.tensor(max_tokens, device=input_ids.device)
    while True:
        chosen = out.logits[:, -1, :].argmax(-1)
        for row, token in zip(active.tolist(), chosen.tolist()):
            completions[row].append(token)
            if repetition_window and len(completions[row]) % 8 == 0 and repeats_itself(completions[row],
                                                                                           repetition_window):
                looped.add(row)
        done = torch.isin(chosen, stops) | (torch.tensor([len(completions[r]) for r in active.tolist()],
                                                          device=chosen.device) >= limits[active])
        if looped:
            done |= torch.tensor([r in looped for r in active.tolist()], device=chosen.device)
        if bool(done.all()):
            return completions, looped
        if bool(done.any()):
            keep = (~done).nonzero().squeeze(-1)
            for layer in cache.layers:
                layer.keys, layer.values = layer.keys[keep], layer.values[keep]
            active, chosen, attention, last = active[keep], chosen[keep], attention[keep], last[keep]
        attention = torch.cat([attention, attention.new_ones((attention.shape[0], 1))], dim=-1)
        last = last + 1
        out = model(input_ids=chosen[:, None], attention_mask=attention, position_ids=last[:, None],
                    past_key_values=cache, use_cache=True)
