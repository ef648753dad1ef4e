"""A local transformers student as a litellm provider: `env0-local/<alias>`, base or base + PEFT adapter.

Same rules as training: the prompt is the tokenizer's chat template with the tools
(`apply_chat_template(..., tools=..., add_generation_prompt=True)`), and the generated text becomes
OpenAI tool calls through TRL's `add_response_schema` + `parse_response` (the Qwen3.5 template and
parser TRL uses for SFT). Token ids of prompt and completion go back with the reply.

Speed: concurrent episodes' requests are batched into one left-padded `generate` call; a batch
runs in a worker thread so the event loop keeps serving tools and other episodes meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..llm import litellm, register_free_model, register_provider
from ..messages import template_messages
from .greedy import greedy_decode
from .lockstep import LANE
from .prefix_cache import CacheStats, PrefixCache, batch_cache, row_kv, supports_prefix_cache
from .base import Env0Provider, fill_response

PREFIX_CACHE_MB = 512.0  # the tiny student: ~1.5 KB a token, so ~350k tokens (every episode of a 64-wide rollout)


@dataclass
class GenRequest:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    temperature: float
    top_p: float
    max_tokens: int

    @property
    def sampling_key(self) -> tuple:
        return (self.temperature, self.top_p if self.temperature > 0 else 1.0)


@dataclass
class GenResult:
    message: dict[str, Any]
    prompt_ids: list[int]
    completion_ids: list[int]
    finish_reason: str
    cached_tokens: int = 0  # of prompt_ids, reused from the prefix cache rather than prefilled


class LocalModel:
    """A loaded model + tokenizer with a response parser; `generate_batch` is the only heavy call."""

    def __init__(self, alias: str, base_path: str | Path, adapter_path: str | Path | None = None, device: str = "cpu",
                 max_batch_size: int = 16, gather_ms: float = 5.0, prefix_cache_mb: float = PREFIX_CACHE_MB,
                 repetition_window: int | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from env0_posttrain.util import torch_threads

        torch_threads.apply(torch)  # the run's count: generation numerics depend on it too

        from env0_posttrain.util.devices import model_dtype, resolve_device

        device = resolve_device(device)  # 'auto' -> cuda when present
        self.alias, self.base_path, self.adapter_path, self.device = alias, str(base_path), adapter_path, device
        self.max_batch_size, self.gather_s = max_batch_size, gather_ms / 1000.0
        self.repetition_window = repetition_window
        self._set_tokenizer(AutoTokenizer.from_pretrained(self.base_path))
        # fp32 on CPU (the digits the CPU runs always had), bf16 on a CUDA GPU that has it
        model = AutoModelForCausalLM.from_pretrained(self.base_path, dtype=model_dtype(device))
        if adapter_path is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(adapter_path))
        self.model = model.to(device).eval()
        self._init_runtime(prefix_cache_mb)

    @classmethod
    def from_loaded(cls, alias: str, model: Any, tokenizer: Any, device: str = "cpu", max_batch_size: int = 16,
                    gather_ms: float = 5.0, prefix_cache_mb: float = 0.0) -> "LocalModel":
        """Wrap a model already in memory (the GRPO policy being trained): same render, parse and batching. No
        prefix cache unless asked: a policy in training changes its weights, and cached keys would be stale."""
        self = cls.__new__(cls)
        self.alias, self.base_path, self.adapter_path, self.device = alias, str(tokenizer.name_or_path), None, device
        self.max_batch_size, self.gather_s = max_batch_size, gather_ms / 1000.0
        self.repetition_window = None  # sampling (GRPO) decodes through `generate`, which has no such cut
        self._set_tokenizer(tokenizer)
        self.model = model
        self._init_runtime(prefix_cache_mb)
        return self

    def _set_tokenizer(self, tok: Any) -> None:
        from trl.chat_template_utils import add_response_schema

        if not getattr(tok, "chat_template", None):
            raise ValueError(f"{self.base_path}: tokenizer has no chat template")
        try:
            add_response_schema(tok)
        except ValueError as err:
            raise ValueError(f"{self.base_path}: TRL has no response parser for this chat template ({err})") from None
        tok.padding_side = "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        self.tokenizer = tok
        stops = {tok.eos_token_id, tok.convert_tokens_to_ids("<|im_end|>")}
        self.stop_ids = sorted(i for i in stops if isinstance(i, int) and i >= 0 and i != tok.unk_token_id)

    def _init_runtime(self, prefix_cache_mb: float) -> None:
        self._gen_lock = threading.Lock()
        self._batchers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.stats = CacheStats()
        self.prefix_cache = None
        model = getattr(self.model, "get_base_model", lambda: self.model)()
        if prefix_cache_mb <= 0 or not supports_prefix_cache(model):
            return
        self._config = model.config
        text = self._config.get_text_config()
        self._n_layers = text.num_hidden_layers
        head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
        kv_heads = getattr(text, "num_key_value_heads", None) or text.num_attention_heads
        per_token = 2 * self._n_layers * kv_heads * head_dim * next(model.parameters()).element_size()
        self.prefix_cache = PrefixCache(int(prefix_cache_mb * 2**20 / per_token))

    # -- rendering and parsing: the training rules -------------------------------------------------
    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[int]:
        text = self.tokenizer.apply_chat_template(template_messages(messages), tools=tools or None,
                                                  add_generation_prompt=True, tokenize=False)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def parse(self, completion_ids: list[int], prompt_ids: list[int], tools: list[dict[str, Any]] | None) -> dict:
        from trl.chat_template_utils import parse_response

        parsed = parse_response(self.tokenizer, completion_ids, prefix=prompt_ids, tools=tools or None)
        message: dict[str, Any] = {"role": "assistant", "content": parsed.get("content") or None}
        if parsed.get("reasoning_content"):
            message["reasoning_content"] = parsed["reasoning_content"]
        calls = []
        for call in parsed.get("tool_calls") or []:
            fn = call.get("function", call)
            args = fn.get("arguments", {})
            calls.append({"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                          "function": {"name": fn.get("name", ""),
                                       "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}})
        if calls:
            message["tool_calls"] = calls
        return message

    # -- generation -------------------------------------------------------------------------------
    def generate_batch(self, requests: list[GenRequest]) -> list[GenResult]:
        """One batch of requests that share sampling settings, left-padded. With the prefix cache (plain-attention
        models) each row reuses its longest cached prompt prefix, so only its new tokens are prefilled, and greedy
        rows leave the batch as they finish (greedy.py); sampling goes through transformers' `generate`."""
        import torch

        prompts = [self.render(r.messages, r.tools) for r in requests]
        cache = self.prefix_cache
        hits = [cache.longest(p) for p in prompts] if cache is not None else [(None, 0)] * len(prompts)
        hits = [(e, min(n, len(p) - 1)) for (e, n), p in zip(hits, prompts)]  # at least one token is fed
        reused = max(n for _, n in hits)
        fresh = [len(p) - n for p, (_, n) in zip(prompts, hits)]
        span = max(fresh)
        width = reused + span
        pad = self.tokenizer.pad_token_id
        rows, mask = [], []
        for p, (_, n), f in zip(prompts, hits, fresh):  # [pad][cached part][pad][new part]
            rows.append([pad] * (reused - n) + p[:n] + [pad] * (span - f) + p[n:])
            mask.append([0] * (reused - n) + [1] * n + [0] * (span - f) + [1] * f)
        input_ids = torch.tensor(rows, device=self.device)
        attention = torch.tensor(mask, device=self.device)
        max_new = max(r.max_tokens for r in requests)

        def keep_prompts(batch_cache_now: Any) -> None:  # each row's prompt KV, before any row leaves the batch
            for i, (p, (_, n), f) in enumerate(zip(prompts, hits, fresh)):
                kept = torch.cat([torch.arange(reused - n, reused), torch.arange(width - f, width)])
                cache.put(p, row_kv(batch_cache_now, i, kept.to(self.device)))

        with self._gen_lock, torch.no_grad():
            past = batch_cache(hits, reused, width + max_new, self._config, input_ids.device) if cache is not None else None
            t0 = time.perf_counter()
            looped: set[int] = set()
            if past is not None and requests[0].temperature == 0:
                completions, looped = greedy_decode(self.model, input_ids, attention, past, reused, self.stop_ids,
                                                    [r.max_tokens for r in requests], keep_prompts,
                                                    self.repetition_window)
                self.stats.decode_steps += max(map(len, completions)) - 1
            else:
                completions = self._generate(requests, input_ids, attention, past, max_new)
                if past is not None:
                    keep_prompts(past)
            self.stats.generate_s += time.perf_counter() - t0
        results = []
        for i, (req, prompt, row) in enumerate(zip(requests, prompts, completions)):
            completion, finish = [], "repetition" if i in looped else "length"
            for tid in row[: req.max_tokens]:
                completion.append(tid)
                if tid in self.stop_ids:
                    finish = "stop"
                    break
            message = self.parse(completion, prompt, req.tools)
            if finish == "stop" and message.get("tool_calls"):
                finish = "tool_calls"
            results.append(GenResult(message, prompt, completion, finish))
        self._count(prompts, hits, results)
        return results

    def _generate(self, requests: list[GenRequest], input_ids: Any, attention: Any, past: Any, max_new: int) -> list:
        """transformers' `generate` for the batch: every row decodes until the longest reply ends."""
        first = requests[0]
        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": self.tokenizer.pad_token_id,
                                  "eos_token_id": self.stop_ids}
        if first.temperature > 0:
            # top_k=0: an OpenAI-style request has no top-k, and GRPO's logprobs assume the full softmax; the
            # model's generation config (transformers' default 50) would otherwise cut the tail off
            kwargs.update(do_sample=True, temperature=first.temperature, top_p=first.top_p, top_k=0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if past is not None:
            kwargs["past_key_values"] = past
        out = self.model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
        self.stats.decode_steps += out.shape[1] - input_ids.shape[1] - 1
        return out[:, input_ids.shape[1]:].tolist()

    def _count(self, prompts: list[list[int]], hits: list, results: list[GenResult]) -> None:
        s = self.stats
        s.batches.append(len(prompts))
        s.requests += len(prompts)
        s.prompt_tokens += sum(map(len, prompts))
        s.reused_tokens += sum(n for _, n in hits)
        s.generated_tokens += sum(len(r.completion_ids) for r in results)
        for r, (_, n) in zip(results, hits):
            r.cached_tokens = n

    @property
    def batch_sizes(self) -> list[int]:
        return self.stats.batches

    def clear_prefix_cache(self) -> None:
        """Forget every cached prompt (call it when the weights change, e.g. between GRPO steps)."""
        if self.prefix_cache is not None:
            self.prefix_cache.clear()

    async def generate(self, request: GenRequest) -> GenResult:
        loop = asyncio.get_running_loop()
        batcher = self._batchers.get(loop)
        if batcher is None:
            batcher = self._batchers[loop] = _Batcher(self)
        return await batcher.submit(request)


class _Batcher:
    """Runs concurrent requests as batches. A rollout played in lanes (lockstep.py) gets a batch when every lane
    still playing has its request waiting, rows in lane order; other requests are collected for a few ms (or until
    the batch is full)."""

    def __init__(self, model: LocalModel):
        self.model = model
        self.pending: list[tuple[GenRequest, asyncio.Future, tuple | None]] = []
        self.worker: asyncio.Task | None = None
        self.wake = asyncio.Event()

    async def submit(self, request: GenRequest) -> GenResult:
        fut = asyncio.get_running_loop().create_future()
        lane = LANE.get()
        if lane is not None:
            lane[0].listen(self.wake.set)  # a lane that ends may complete a tick
        self.pending.append((request, fut, lane))
        self.wake.set()
        if self.worker is None or self.worker.done():
            self.worker = asyncio.ensure_future(self._drain())
        return await fut

    def _tick(self) -> list | None:
        """The requests of a rollout whose every live lane is waiting, in lane order; None if no rollout is ready."""
        by_rollout: dict[int, list] = {}
        for item in self.pending:
            if item[2] is not None:
                by_rollout.setdefault(id(item[2][0]), []).append(item)
        for items in by_rollout.values():
            lanes = items[0][2][0]
            if lanes.live <= {lane for _, _, (_, lane) in items}:
                return sorted(items, key=lambda item: item[2][1])
        return None

    async def _drain(self) -> None:
        size = self.model.max_batch_size
        while True:
            self.pending = [p for p in self.pending if not p[1].done()]
            if not self.pending:
                return
            batch = self._tick()
            if batch is None:
                free = [p for p in self.pending if p[2] is None]
                if not free:  # lanes still playing tools or verifiers: wait for their requests
                    self.wake.clear()
                    await self.wake.wait()
                    continue
                if len(free) < size:
                    await asyncio.sleep(self.model.gather_s)
                    free = [p for p in self.pending if p[2] is None and not p[1].done()]
                key = free[0][0].sampling_key
                batch = [p for p in free if p[0].sampling_key == key][:size]
            taken = {id(f) for _, f, _ in batch}
            self.pending = [p for p in self.pending if id(p[1]) not in taken]
            for i in range(0, len(batch), size):
                await self._run(batch[i:i + size])

    async def _run(self, batch: list) -> None:
        try:
            results = await asyncio.to_thread(self.model.generate_batch, [r for r, _, _ in batch])
        except Exception as exc:  # noqa: BLE001 - every waiter gets the failure
            for _, f, _ in batch:
                if not f.done():
                    f.set_exception(exc)
            return
        for (_, f, _), res in zip(batch, results):
            if not f.done():
                f.set_result(res)


_MODELS: dict[str, LocalModel] = {}


class LocalProvider(Env0Provider):
    call_cost = 0.0

    async def respond(self, model, messages, options, meta, model_response):
        lm = _MODELS.get(model)
        if lm is None:
            raise litellm.NotFoundError(message=f"no local model registered as '{model}'; "
                                        "call register_local_model first", model=model, llm_provider="env0-local")
        request = GenRequest(messages=messages, tools=options.get("tools"),
                             temperature=float(options.get("temperature") or 0.0),
                             top_p=float(options.get("top_p") or 1.0), max_tokens=int(options.get("max_tokens") or 512))
        res = await lm.generate(request)
        return fill_response(model_response, model, res.message, prompt_tokens=len(res.prompt_ids),
                             completion_tokens=len(res.completion_ids), cached_tokens=res.cached_tokens,
                             finish_reason=res.finish_reason, hidden={"env0_prompt_token_ids": res.prompt_ids,
                                     "env0_completion_token_ids": res.completion_ids})


def register_local_model(alias: str, base_path: str | Path, adapter_path: str | Path | None = None,
                         device: str = "cpu", *, max_batch_size: int = 16, gather_ms: float = 5.0,
                         prefix_cache_mb: float = PREFIX_CACHE_MB, repetition_window: int | None = None) -> str:
    """Load the model and serve it as `env0-local/<alias>`; returns that litellm model id. `repetition_window`: greedy
    replies that repeat one block over their last N tokens are cut there (finish reason `repetition`)."""
    if "/" in alias or not alias:
        raise ValueError(f"local model alias must be a non-empty name without '/', got {alias!r}")
    _MODELS[alias] = LocalModel(alias, base_path, adapter_path, device, max_batch_size, gather_ms, prefix_cache_mb,
                                repetition_window)
    register_provider("env0-local", LocalProvider())
    model_id = f"env0-local/{alias}"
    register_free_model(model_id)
    return model_id


def register_loaded_model(model: LocalModel) -> str:
    """Serve an already wrapped model (see `LocalModel.from_loaded`) as `env0-local/<alias>`."""
    _MODELS[model.alias] = model
    register_provider("env0-local", LocalProvider())
    model_id = f"env0-local/{model.alias}"
    register_free_model(model_id)
    return model_id


def unregister_local_model(model_id: str) -> None:
    """Stop serving `env0-local/<alias>` (or `<alias>`) so its weights can be freed: a stage that serves a new
    adapter each round (the on-policy rounds) does not keep the earlier ones loaded."""
    _MODELS.pop(model_id.removeprefix("env0-local/"), None)


def local_model(alias: str) -> LocalModel:
    return _MODELS[alias]
