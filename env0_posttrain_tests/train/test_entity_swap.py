"""Entity-swapped copies of training conversations (train/entity_swap.py): one permutation of each class renames a
member everywhere it is named, so the call still copies what the request names; the on-policy relabel rows gain such
copies when `onpolicy.entity_swaps` asks."""

from __future__ import annotations

import asyncio
import json
import random
import re

import pytest

from env0_posttrain.agent import AgentSettings, run_episode
from env0_posttrain.agent.endpoint import oracle_endpoint
from env0_posttrain.tasks import TEMPLATES, company, template_stream
from env0_posttrain.tasks.generator import COMPANY_SEED
from env0_posttrain.tasks.vocabulary import linked_entities
from env0_posttrain.train.entity_swap import EntitySwapper, swapper_for_company
from env0_posttrain.train.onpolicy_relabel import relabel_rows
from env0_posttrain_tests.support.agent import build_tiny_student

WS = company()
PEOPLE = {p.name: p for p in WS.directory}
CHANNELS = sorted(f"#{c.name}" for c in WS.slack.db.channels.values() if c.name)


def _conversation(person, channel: str) -> list[dict]:
    listing = json.dumps({"ok": True, "result": {"channels": CHANNELS}})
    return [
        {"role": "system", "content": f"You work for {person.name}; the Finance team reads #general."},
        {"role": "user", "content": f"Tell {person.first} in {channel} that the deploy is finished. Benefits too."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {
            "name": "slack_chat_postMessage", "arguments": json.dumps({"channel": channel, "text": "the deploy is finished",
                                                                       "cc": person.email})}}]},
        {"role": "tool", "tool_call_id": "c0", "name": "slack_chat_postMessage", "content": listing},
        {"role": "assistant", "content": f"Posted in {channel} for {person.name} (Finance)."},
    ]


def test_one_permutation_renames_each_member_everywhere_and_nothing_else():
    swapper = EntitySwapper(linked_entities(WS))
    person = PEOPLE[sorted(PEOPLE)[0]]
    assert "Ben" in {p.first for p in WS.directory}  # so "Benefits" would be renamed without the word edges
    seen_people, seen_channels = set(), set()
    for seed in range(40):
        original = _conversation(person, "#general")
        out = swapper.swap(original, random.Random(seed))
        assert out is not None and original == _conversation(person, "#general")  # the input is not changed
        assert out[0] == original[0]  # the system prompt is never renamed
        user = out[1]["content"]
        args = json.loads(out[2]["tool_calls"][0]["function"]["arguments"])
        new = next(p for p in WS.directory if args["cc"] == p.email)  # one person, named by all of their strings
        assert user.startswith(f"Tell {new.first} in {args['channel']} that ") and "Benefits too." in user
        assert args["text"] in user and args["channel"] in CHANNELS
        assert out[4]["content"] == f"Posted in {args['channel']} for {new.name} (Finance)."  # "Finance" names two classes
        listed = json.loads(out[3]["content"])["result"]["channels"]
        assert sorted(listed) == CHANNELS  # a permutation: every channel still listed once
        seen_people.add(new.email)
        seen_channels.add(args["channel"])
        assert swapper.swap(original, random.Random(seed)) == out  # seeded
    assert len(seen_people) > 10 and len(seen_channels) == len(CHANNELS)


def test_a_conversation_naming_no_entity_has_no_copy():
    swapper = swapper_for_company(COMPANY_SEED)
    plain = [{"role": "system", "content": "Rosa Reyes"}, {"role": "user", "content": "What time is it?"},
             {"role": "assistant", "content": "Noon."}]
    assert swapper.swap(plain, random.Random(0)) is None
    assert EntitySwapper({}).swap(plain, random.Random(0)) is None


def test_members_are_permuted_only_among_those_with_the_same_roles():
    swapper = EntitySwapper({"person": [("Ann Lee", "Ann", "ann@x.test"), ("Bo Kim", "", "bo@x.test"),
                                        ("Cy Wu", "Cy", "cy@x.test"), ("Di Ng", "", "di@x.test")]})
    for seed in range(20):
        text = swapper.swap([{"role": "user", "content": "Ann Lee and Ann, bo@x.test"}], random.Random(seed))
        if text is not None:
            assert text[0]["content"] in ("Cy Wu and Cy, di@x.test", "Ann Lee and Ann, di@x.test",
                                          "Cy Wu and Cy, bo@x.test")


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from transformers import AutoTokenizer

    path = tmp_path_factory.mktemp("tiny-swap")
    build_tiny_student(path)
    return AutoTokenizer.from_pretrained(str(path))


def test_relabelled_rows_gain_renamed_copies_whose_call_copies_the_renamed_request(tokenizer):
    tasks = {t.id: t for t in (next(template_stream(TEMPLATES[i], 4)) for i in ("mail_send_note", "mail_draft_note"))}
    settings = AgentSettings(max_steps=4, backoff_base_s=0, concurrency=4)

    async def every():
        return await asyncio.gather(*(run_episode(t, oracle_endpoint(1.0, seed=1), settings, "onpolicy", 0, "r")
                                      for t in tasks.values()))

    episodes = asyncio.run(every())
    plain, _, base = relabel_rows(episodes, tasks, oracle_endpoint(1.0, seed=2), settings, "r", tokenizer, 4)
    rows, items, stats = relabel_rows(episodes, tasks, oracle_endpoint(1.0, seed=2), settings, "r", tokenizer, 4,
                                      entity_swaps=3, swap_seed=7)
    assert stats.rows == base.rows == len(plain) and stats.rows_swapped > 0
    assert len(rows) == stats.rows + stats.rows_swapped
    originals = {r["source"]: r for r in plain}
    assert all(r == originals[r["source"]] for r in rows if "swap" not in r["source"])
    copies = [r for r in rows if "swap" in r["source"]]
    changed = 0
    for row in copies:
        n = row["completion_mask"].index(1)
        key = json.loads(row["source"])["episode_key"].rsplit(":", 1)[0]
        original = originals[json.dumps({"episode_key": key})]
        prompt, trained = tokenizer.decode(row["input_ids"][:n]), tokenizer.decode(row["input_ids"][n:])
        args = dict(re.findall(r"<parameter=(\w+)>\n(.*?)\n</parameter>", trained))
        if args:  # the call: its recipient, subject and body are the renamed request's
            person = next(p for p in WS.directory if p.email == args["to"])
            request = prompt[prompt.rindex("<|im_start|>user"):]
            assert person.name in request or person.email in request
            assert f'"{args["subject"]}"' in request and f'"{args["body_text"]}"' in request
            changed += trained != tokenizer.decode(original["input_ids"][original["completion_mask"].index(1):])
    assert changed > 0
    again, _, _ = relabel_rows(episodes, tasks, oracle_endpoint(1.0, seed=2), settings, "r", tokenizer, 4,
                               entity_swaps=3, swap_seed=7)
    assert again == rows


def test_entity_weight_weighs_the_teachers_entity_tokens_only(tokenizer):
    task = next(template_stream(TEMPLATES["mail_send_note"], 4))
    settings = AgentSettings(max_steps=4, backoff_base_s=0, concurrency=4)
    episode = asyncio.run(run_episode(task, oracle_endpoint(1.0, seed=1), settings, "onpolicy", 0, "r"))
    rows, _, stats = relabel_rows([episode], {task.id: task}, oracle_endpoint(1.0, seed=2), settings, "r", tokenizer,
                                  4, entity_weight=5.0)
    weighted = [r for r in rows if "weight" in r]
    assert len(weighted) == 1 and stats.entity_tokens > 0  # the call; the final "Done." names no entity
    row = weighted[0]
    n = row["completion_mask"].index(1)
    heavy = [tokenizer.decode([t]) for t, w in zip(row["input_ids"], row["weight"]) if w == 5.0]
    assert set(row["weight"][:n]) == {1.0} and len(heavy) == stats.entity_tokens
    args = dict(re.findall(r"<parameter=(\w+)>\n(.*?)\n</parameter>", tokenizer.decode(row["input_ids"][n:])))
    assert "".join(heavy) == "".join(args[k] for k in sorted(args))  # to, subject and body, nothing else
