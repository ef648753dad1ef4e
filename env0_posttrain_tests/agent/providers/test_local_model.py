"""The local transformers student behind `env0-local/<alias>`: training's template and parser, token
ids, batched generation, PEFT adapters, all through the same episode loop."""

from __future__ import annotations

import asyncio
import json

import pytest

from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model, run_episode, run_rollouts_sync
from env0_posttrain.agent.providers.local_model import GenRequest, local_model
from env0_posttrain.agent.messages import template_messages
from env0_posttrain_tests.support.agent import NotesEnv, build_tiny_student, notes_task

SHORT = AgentSettings(max_steps=2, system_prompt="Use the tools.")


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-student")
    build_tiny_student(path)
    return path


@pytest.fixture(scope="session")
def tiny(tiny_dir):
    return register_local_model("tiny", tiny_dir, max_batch_size=8)


def test_parser_reads_back_what_the_training_template_renders(tiny):
    lm = local_model("tiny")
    env = NotesEnv()
    tools = env.openai_tools(["notes_create", "notes_list"])
    call = {"id": "c1", "type": "function",
            "function": {"name": "notes_create", "arguments": json.dumps({"title": "Q3 plan", "body": "line 1\nline 2"})}}
    convo = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
             {"role": "assistant", "content": None, "tool_calls": [call]}]
    full = lm.tokenizer.apply_chat_template(template_messages(convo), tools=tools, tokenize=False)
    prompt = lm.tokenizer.apply_chat_template(template_messages(convo[:2]), tools=tools, tokenize=False,
                                              add_generation_prompt=True)
    assert full.startswith(prompt)
    completion = lm.tokenizer(full[len(prompt):], add_special_tokens=False)["input_ids"]
    msg = lm.parse(completion, lm.render(convo[:2], tools), tools)
    assert msg["tool_calls"][0]["function"]["name"] == "notes_create"
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"title": "Q3 plan", "body": "line 1\nline 2"}
    text = lm.tokenizer("It is done.<|im_end|>", add_special_tokens=False)["input_ids"]
    assert lm.parse(text, [], tools) == {"role": "assistant", "content": "It is done."}
    # a call to a tool never offered still parses as a call, so the loop can report it as unknown_tool
    odd = "<tool_call>\n<function=notes_purge>\n<parameter=all>\ntrue\n</parameter>\n</function>\n</tool_call><|im_end|>"
    msg = lm.parse(lm.tokenizer(odd, add_special_tokens=False)["input_ids"], lm.render(convo[:2], tools), tools)
    assert msg["tool_calls"][0]["function"]["name"] == "notes_purge"


def test_episode_captures_token_ids_and_usage(tiny):
    ep = asyncio.run(run_episode(notes_task(1), ModelEndpoint(model=tiny, max_tokens=8), SHORT, "base", 0, "r",
                                 env=NotesEnv()))
    lm = local_model("tiny")
    assert ep.model == "env0-local/tiny" and ep.exchanges
    for ex in ep.exchanges:
        assert ex.prompt_token_ids == lm.render(ep.messages[: ex.request_len], ep.tools)
        assert 0 < len(ex.completion_token_ids) <= 8
        assert ex.usage.prompt_tokens == len(ex.prompt_token_ids)
        assert ex.usage.completion_tokens == len(ex.completion_token_ids)
    assert ep.usage.cost_usd == 0.0 and ep.verifier is not None


def test_concurrent_requests_are_batched_and_match_unbatched_greedy(tiny):
    lm = local_model("tiny")
    env = NotesEnv()
    tools = env.openai_tools(["notes_create"])
    requests = [GenRequest([{"role": "system", "content": "s" * (1 + i)}, {"role": "user", "content": f"task {i}" * (i + 1)}],
                           tools, 0.0, 1.0, 6) for i in range(4)]
    alone = [lm.generate_batch([r])[0].completion_ids for r in requests]

    async def together():
        return await asyncio.gather(*(lm.generate(r) for r in requests))

    before = len(lm.batch_sizes)
    batched = asyncio.run(together())
    assert lm.batch_sizes[before:] == [4]
    assert [b.completion_ids for b in batched] == alone


def test_rollouts_share_generate_calls(tiny):
    lm = local_model("tiny")
    before = len(lm.batch_sizes)
    s = run_rollouts_sync([notes_task(i) for i in range(6)], "base", 1, ModelEndpoint(model=tiny, max_tokens=4),
                          AgentSettings(max_steps=1, system_prompt="Use the tools.", concurrency=6), "r", set(), None,
                          env=NotesEnv(), progress=False)
    sizes = lm.batch_sizes[before:]
    assert s.completed == 6 and sum(sizes) == 6 and max(sizes) > 1


def test_adapter_is_applied_through_the_same_harness(tiny_dir, tmp_path):
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(1)
    base = AutoModelForCausalLM.from_pretrained(tiny_dir)
    peft = get_peft_model(base, LoraConfig(r=4, lora_alpha=64, target_modules=["q_proj", "v_proj", "down_proj"],
                                           init_lora_weights=False, task_type="CAUSAL_LM"))
    peft.save_pretrained(tmp_path / "adapter")
    sft = register_local_model("tiny-sft", tiny_dir, adapter_path=tmp_path / "adapter")
    req = GenRequest([{"role": "system", "content": "s"}, {"role": "user", "content": "create a note"}],
                     NotesEnv().openai_tools(["notes_create"]), 0.0, 1.0, 8)
    assert sft == "env0-local/tiny-sft"
    assert isinstance(local_model("tiny-sft").model, PeftModel)
    assert local_model("tiny-sft").generate_batch([req])[0].completion_ids != \
        local_model("tiny").generate_batch([req])[0].completion_ids


def test_unknown_alias_and_bad_template_are_clear_errors(tiny_dir, tmp_path):
    from transformers import AutoTokenizer

    with pytest.raises(ValueError, match="alias"):
        register_local_model("a/b", tiny_dir)
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    tok.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    tok.save_pretrained(tmp_path)
    from transformers import AutoConfig

    AutoConfig.from_pretrained(tiny_dir).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="no response parser"):
        register_local_model("odd", tmp_path)


@pytest.mark.slow
def test_a_trained_student_calls_a_tool_that_the_harness_executes(tiny_dir, tmp_path):
    """Overfit the tiny model on one first turn; the harness must parse and run its call."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    task = notes_task(7, titles=["note 7-a"])
    env = NotesEnv()
    tools = env.openai_tools(task.tools)
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    prompt = tok.apply_chat_template([{"role": "system", "content": "Use the tools."},
                                      {"role": "user", "content": task.instruction}], tools=tools,
                                     add_generation_prompt=True, tokenize=False)
    target = "<tool_call>\n<function=notes_create>\n<parameter=title>\nnote 7-a\n</parameter>\n</function>\n</tool_call><|im_end|>"
    p, c = (tok(x, add_special_tokens=False)["input_ids"] for x in (prompt, target))
    ids, labels = torch.tensor([p + c]), torch.tensor([[-100] * len(p) + c])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    torch.manual_seed(0)
    for _ in range(45):
        model(input_ids=ids, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    mid = register_local_model("tiny-trained", tmp_path)
    ep = asyncio.run(run_episode(task, ModelEndpoint(model=mid, max_tokens=40), SHORT, "sft", 0, "r", env=env))
    first = ep.exchanges[0]
    assert first.finish_reason == "tool_calls"
    assert json.loads(first.response["tool_calls"][0]["function"]["arguments"]) == {"title": "note 7-a"}
    assert env.calls[0] == ("notes_create", {"title": "note 7-a"})
    assert ep.verifier.checks["created"] == 1.0


def test_sampling_draws_from_the_whole_softmax_not_the_top_50(tiny):
    """OpenAI-style requests carry no top-k: sampling must not inherit transformers' default top_k=50 (GRPO's
    logprobs are over the full softmax). The random tiny model is near-uniform over its vocabulary."""
    import torch

    lm = local_model("tiny")
    assert lm.model.config.vocab_size > 200
    req = GenRequest([{"role": "user", "content": "pick any token"}], None, 1.0, 1.0, 1)
    torch.manual_seed(0)
    firsts = {r.completion_ids[0] for _ in range(16) for r in lm.generate_batch([req] * 8)}
    assert len(firsts) > 50  # 128 draws; with a top-50 cut at most 50 distinct tokens could come out
