"""Builders shared by the sft tests: realistic episodes, tasks and a tiny local Qwen3.5-template tokenizer.

The tokenizer is trained here with `tokenizers` (no download) and carries TRL's packaged
qwen3_5_nothink template byte for byte, so TRL and transformers treat it as Qwen3.5.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

from env0_posttrain.agent.records import Episode, Exchange, TokenUsage
from env0_posttrain.tasks.model import StateRecipe, Task, ToolCall, VerifierResult

QWEN35_TEMPLATE_PATH = Path(importlib.util.find_spec("trl").origin).parent / "chat_templates" / "qwen3_5_nothink.jinja"
SYSTEM = "You are a workspace assistant. Use the tools to act for the user."
STEERING = "TEACHER ONLY: always list messages before sending anything."

TOOLS = [
    {"type": "function", "function": {
        "name": "gmail_messages_list", "description": "List messages in the mailbox.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "maxResults": {"type": "integer"}}}}},
    {"type": "function", "function": {
        "name": "gmail_messages_send", "description": "Send an email.",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "subject": {"type": "string"},
                                                        "body_text": {"type": "string"}},
                       "required": ["to", "subject"]}}},
    {"type": "function", "function": {
        "name": "slack_chat_postMessage", "description": "Post a message to a Slack channel.",
        "parameters": {"type": "object", "properties": {"channel": {"type": "string"}, "text": {"type": "string"}},
                       "required": ["channel", "text"]}}},
]


def make_task(i: int = 0) -> Task:
    return Task(
        id=f"mail-reply-{i:03d}", family="mail", template_id="mail.reply_to_sender", difficulty=2,
        instruction=f"Reply to the latest email from person{i}@example.com saying the report is ready.",
        recipe=StateRecipe(seed=i, items={"sender": f"person{i}@example.com"}),
        oracle=[ToolCall(name="gmail_messages_list", arguments={"q": f"from:person{i}@example.com"}),
                ToolCall(name="gmail_messages_send", arguments={"to": f"person{i}@example.com"})],
        tools=["gmail_messages_list", "gmail_messages_send", "slack_chat_postMessage"],
    )


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def conversation(i: int, *, steering: bool = False, think: bool = True, long_text: int = 0) -> list[dict[str, Any]]:
    system = SYSTEM + ("\n\n" + STEERING if steering else "")
    filler = " ".join(["the quarterly report numbers"] * long_text)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": make_task(i).instruction},
        {"role": "assistant", "content": "<think>Find the email first.</think>" if think else None,
         "tool_calls": [_call(f"call_{i}_1", "gmail_messages_list", {"q": f"from:person{i}@example.com", "maxResults": 1})]},
        {"role": "tool", "tool_call_id": f"call_{i}_1", "name": "gmail_messages_list",
         "content": json.dumps({"messages": [{"id": f"m{i}", "threadId": f"t{i}", "snippet": filler or "report?"}]})},
        {"role": "assistant", "content": None,
         "tool_calls": [_call(f"call_{i}_2", "gmail_messages_send",
                              {"to": f"person{i}@example.com", "subject": "Re: report", "body_text": "It is ready."})]},
        {"role": "tool", "tool_call_id": f"call_{i}_2", "name": "gmail_messages_send", "content": '{"id": "sent1"}'},
        {"role": "assistant", "content": ("<think>Sent.</think>" if think else "") + "I replied: the report is ready."},
    ]


def make_episode(i: int = 0, *, trial: int = 0, reward: float = 1.0, steering: bool = False, think: bool = True,
                 tokenizer: Any = None, stop: str = "agent_completed", long_text: int = 0,
                 capture_template: str | None = None) -> Episode:
    """A three-turn mail episode; with a tokenizer, exchanges carry the ids a server using that
    tokenizer (and `capture_template`, default its own) would have returned."""
    from env0_posttrain.sft.rows import to_trl_message
    from env0_posttrain.sft.tokens import render_ids

    messages = conversation(i, steering=steering, think=think, long_text=long_text)
    exchanges = []
    for k, req in enumerate((2, 4, 6)):
        prompt_ids = completion_ids = None
        if tokenizer is not None:
            trl_msgs = [to_trl_message(m) for m in messages]
            prompt_ids = render_ids(trl_msgs[:req], TOOLS, tokenizer, add_generation_prompt=True,
                                    chat_template=capture_template)
            full = render_ids(trl_msgs[: req + 1], TOOLS, tokenizer, chat_template=capture_template)
            start = next((k for k, (a, b) in enumerate(zip(prompt_ids, full)) if a != b), len(prompt_ids))
            completion_ids = full[start:]
            eot = tokenizer.convert_tokens_to_ids("<|im_end|>")
            completion_ids = completion_ids[: completion_ids.index(eot) + 1]
        exchanges.append(Exchange(index=k, request_len=req, response=messages[req], finish_reason="stop",
                                  usage=TokenUsage(prompt_tokens=100 + k, completion_tokens=20), latency_s=0.5,
                                  prompt_token_ids=prompt_ids, completion_token_ids=completion_ids))
    return Episode(
        run_id="run-a", arm="teacher", task_id=make_task(i).id, trial=trial, model="env0-oracle/oracle",
        messages=messages, tools=TOOLS, steering_prompt=STEERING if steering else None,
        final_answer="I replied: the report is ready.", stop_condition=stop,
        verifier=VerifierResult(reward=reward, checks={"sent": 1.0 if reward >= 1 else 0.0, "recipient": 1.0}),
        exchanges=exchanges, usage=TokenUsage(prompt_tokens=303, completion_tokens=60), duration_s=1.5,
    )


@functools.lru_cache(maxsize=1)
def tiny_tokenizer():
    """Byte-level BPE (~600 tokens) trained on rendered conversations; Qwen3.5 template and special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [json.dumps(TOOLS), *(json.dumps(conversation(i)) for i in range(4)),
              "<tool_call>\n<function=gmail_messages_send>\n<parameter=to>\n</parameter>\n</function>\n</tool_call>",
              "<think>\n\n</think>\n\n<tool_response>\n</tool_response> system user assistant"]
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        chat_template=QWEN35_TEMPLATE_PATH.read_text(),
    )


def test_tiny_tokenizer_renders_qwen35_tool_calls_and_roundtrips():
    from env0_posttrain.sft.rows import to_trl_message

    tok = tiny_tokenizer()
    msgs = [to_trl_message(m) for m in conversation(0, think=False)]
    text = tok.apply_chat_template(msgs, tools=TOOLS, tokenize=False)
    assert "<function=gmail_messages_send>\n<parameter=to>\nperson0@example.com\n</parameter>" in text
    assert text.startswith("<|im_start|>system\n# Tools")
    ids = tok.apply_chat_template(msgs, tools=TOOLS, tokenize=True, return_dict=True)["input_ids"]
    assert tok.decode(ids) == text
    assert tok.chat_template == QWEN35_TEMPLATE_PATH.read_text()
