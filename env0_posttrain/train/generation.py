"""Greedy batched generation and Qwen3.5 tool-call parsing, shared by the probe and the tuning bench."""

from __future__ import annotations

import json
from typing import Any

TURN_END = "<|im_end|>"
# What the Qwen3.5 (no-think) template writes before the model's first token.
GENERATION_PREFIX = "<|im_start|>assistant\n<think>\n\n</think>\n\n"


def first_call_prompt(row: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The messages up to the first assistant turn, and that turn's first tool call (None if it has none)."""
    messages = row["messages"]
    for i, m in enumerate(messages):
        if m.get("role") == "assistant":
            calls = m.get("tool_calls") or []
            call = calls[0]["function"] if calls else None
            if call is not None and isinstance(call.get("arguments"), str):
                call = {**call, "arguments": json.loads(call["arguments"])}
            return messages[:i], call
    raise ValueError("row has no assistant message")


def load_tokenizer_with_parser(path):
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema

    tok = AutoTokenizer.from_pretrained(str(path))
    tok.padding_side = "left"
    return add_response_schema(tok)


def greedy_completions(model, tok, prompts: list[tuple[list[dict], list[dict] | None]],
                       max_new_tokens: int = 96, batch_size: int = 16) -> list[str]:
    """Decoded completions (up to and including the end-of-turn token) for each (messages, tools)."""
    import torch

    tok.padding_side = "left"
    texts = [tok.apply_chat_template(m, tools=t, add_generation_prompt=True, tokenize=False) for m, t in prompts]
    out: list[str] = []
    model.eval()
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            enc = tok(texts[i : i + batch_size], return_tensors="pt", padding=True, add_special_tokens=False)
            enc = {k: v.to(model.device) for k, v in enc.items()}
            gen = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
            for seq in gen[:, enc["input_ids"].shape[1]:]:
                text = tok.decode(seq, skip_special_tokens=False).replace(tok.pad_token, "")
                out.append(text.split(TURN_END)[0] + TURN_END if TURN_END in text else text)
    return out


def parse_tool_calls(tok, completion: str, tools: list[dict] | None = None) -> list[dict[str, Any]]:
    """OpenAI-style tool calls parsed by the tokenizer's Qwen3.5 response template; [] when none parse."""
    try:
        msg = tok.parse_response(completion, prefix=GENERATION_PREFIX, tools=tools)
    except Exception:  # noqa: BLE001 - unparseable model output is simply no tool call
        return []
    calls = []
    for c in msg.get("tool_calls") or []:
        fn = c.get("function", c)
        args = fn.get("arguments") or {}
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                args = {"_raw": args}
        calls.append({"name": fn.get("name"), "arguments": _normalise(args)})
    return calls


def _normalise(value: Any) -> Any:
    """Values the template rendered as JSON text come back as strings: read them back."""
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
