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
import uuid
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .llm import litellm, register_free_model, register_provider
from .messages import template_messages
from .provider_base import Env0Provider, fill_response


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


class LocalModel:
    """A loaded model + tokenizer with a response parser; `generate_batch` is the only heavy call."""

    def __init__(self, alias: str, base_path: str | Path, adapter_path: str | Path | None = None, device: str = "cpu",
                 max_batch_size: int = 16, gather_ms: float = 5.0):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from env0_posttrain.torch_threads import use_free_cores

        use_free_cores(torch)  # a served model's batches share the cores with the rollout's own work

        from env0_posttrain.devices import model_dtype, resolve_device

        device = resolve_device(device)  # 'auto' -> cuda when present
        self.alias, self.base_path, self.adapter_path, self.device = alias, str(base_path), adapter_path, device
        self.max_batch_size, self.gather_s = max_batch_size, gather_ms / 1000.0
        self._set_tokenizer(AutoTokenizer.from_pretrained(self.base_path))
        # fp32 on CPU (the digits the CPU runs always had), bf16 on a CUDA GPU that has it
        model = AutoModelForCausalLM.from_pretrained(self.base_path, dtype=model_dtype(device))
        if adapter_path is not None:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(adapter_path))
        self.model = model.to(device).eval()
        self._init_runtime()

    @classmethod
    def from_loaded(cls, alias: str, model: Any, tokenizer: Any, device: str = "cpu", max_batch_size: int = 16,
                    gather_ms: float = 5.0) -> "LocalModel":
        """Wrap a model already in memory (the GRPO policy being trained): same render, parse and batching."""
        self = cls.__new__(cls)
        self.alias, self.base_path, self.adapter_path, self.device = alias, str(tokenizer.name_or_path), None, device
        self.max_batch_size, self.gather_s = max_batch_size, gather_ms / 1000.0
        self._set_tokenizer(tokenizer)
        self.model = model
        self._init_runtime()
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

    def _init_runtime(self) -> None:
        self._gen_lock = threading.Lock()
        self._batchers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.batch_sizes: list[int] = []

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
        """One left-padded `generate` for requests that share sampling settings."""
        import torch

        prompts = [self.render(r.messages, r.tools) for r in requests]
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=self.device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        first = requests[0]
        kwargs: dict[str, Any] = {"max_new_tokens": max(r.max_tokens for r in requests), "pad_token_id": pad,
                                  "eos_token_id": self.stop_ids}
        if first.temperature > 0:
            # top_k=0: an OpenAI-style request has no top-k, and GRPO's logprobs assume the full softmax; the
            # model's generation config (transformers' default 50) would otherwise cut the tail off
            kwargs.update(do_sample=True, temperature=first.temperature, top_p=first.top_p, top_k=0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with self._gen_lock, torch.no_grad():
            out = self.model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
        self.batch_sizes.append(len(requests))
        results = []
        for req, prompt, row in zip(requests, prompts, out[:, width:].tolist()):
            completion, finish = [], "length"
            for tid in row[: req.max_tokens]:
                completion.append(tid)
                if tid in self.stop_ids:
                    finish = "stop"
                    break
            message = self.parse(completion, prompt, req.tools)
            if finish == "stop" and message.get("tool_calls"):
                finish = "tool_calls"
            results.append(GenResult(message, prompt, completion, finish))
        return results

    async def generate(self, request: GenRequest) -> GenResult:
        loop = asyncio.get_running_loop()
        batcher = self._batchers.get(loop)
        if batcher is None:
            batcher = self._batchers[loop] = _Batcher(self)
        return await batcher.submit(request)


class _Batcher:
    """Collects requests for a few ms (or until the batch is full) and runs them as one batch."""

    def __init__(self, model: LocalModel):
        self.model = model
        self.pending: list[tuple[GenRequest, asyncio.Future]] = []
        self.worker: asyncio.Task | None = None

    async def submit(self, request: GenRequest) -> GenResult:
        fut = asyncio.get_running_loop().create_future()
        self.pending.append((request, fut))
        if self.worker is None or self.worker.done():
            self.worker = asyncio.ensure_future(self._drain())
        return await fut

    async def _drain(self) -> None:
        while self.pending:
            if len(self.pending) < self.model.max_batch_size:
                await asyncio.sleep(self.model.gather_s)
            live = [(r, f) for r, f in self.pending if not f.done()]
            key = live[0][0].sampling_key if live else None
            batch = [(r, f) for r, f in live if r.sampling_key == key][: self.model.max_batch_size]
            taken = {id(f) for _, f in batch}
            self.pending = [(r, f) for r, f in live if id(f) not in taken]
            if not batch:
                continue
            try:
                results = await asyncio.to_thread(self.model.generate_batch, [r for r, _ in batch])
            except Exception as exc:  # noqa: BLE001 - every waiter gets the failure
                for _, f in batch:
                    if not f.done():
                        f.set_exception(exc)
                continue
            for (_, f), res in zip(batch, results):
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
                             completion_tokens=len(res.completion_ids), finish_reason=res.finish_reason,
                             hidden={"env0_prompt_token_ids": res.prompt_ids,
                                     "env0_completion_token_ids": res.completion_ids})


def register_local_model(alias: str, base_path: str | Path, adapter_path: str | Path | None = None,
                         device: str = "cpu", *, max_batch_size: int = 16, gather_ms: float = 5.0) -> str:
    """Load the model and serve it as `env0-local/<alias>`; returns that litellm model id."""
    if "/" in alias or not alias:
        raise ValueError(f"local model alias must be a non-empty name without '/', got {alias!r}")
    _MODELS[alias] = LocalModel(alias, base_path, adapter_path, device, max_batch_size, gather_ms)
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


def local_model(alias: str) -> LocalModel:
    return _MODELS[alias]
