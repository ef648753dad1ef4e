"""Rendering conversations with the student's chat template: the one place token ids are made.

Length checks, TITO re-tokenisation and the drift check must all render exactly as TRL does
(`apply_chat_template(messages, tools=...)`), or a row measured to fit could be truncated in
training.
"""

from __future__ import annotations

from typing import Any


def render_ids(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    tokenizer: Any,
    *,
    add_generation_prompt: bool = False,
    chat_template: str | None = None,
) -> list[int]:
    """Token ids of a conversation (TRL-form messages: tool-call arguments as dicts)."""
    out = tokenizer.apply_chat_template(
        messages,
        tools=tools or None,
        tokenize=True,
        add_generation_prompt=add_generation_prompt,
        chat_template=chat_template,
        return_dict=True,
    )
    ids = out["input_ids"]
    if ids and isinstance(ids[0], list):  # batched output of some tokenizers
        ids = ids[0]
    return list(ids)


def count_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tokenizer: Any) -> int:
    from env0_posttrain.sft.rows import to_trl_message

    return len(render_ids([to_trl_message(m) for m in messages], tools, tokenizer))


def end_of_turn_id(tokenizer: Any) -> int | None:
    """The id that ends an assistant turn (Qwen: <|im_end|>, which is also its eos)."""
    for token in ("<|im_end|>", tokenizer.eos_token):
        if token and token in tokenizer.get_vocab():
            return tokenizer.convert_tokens_to_ids(token)
    return None
