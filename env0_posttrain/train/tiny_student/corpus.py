"""What the tiny student reads before it is an agent: the company, the API reference, requests, calls.

A real base model arrives knowing how to read a request, copy its names into a function call and
resolve a colleague to an address; what SFT teaches it is *this* workspace. The tiny base gets the
same starting point from a short pre-training on:
- the company: people directory (with each person's address, many times), channels, groups,
  files, labels, resources as the APIs return them, meeting slots as the Calendar API spells them;
- the API reference in prose (tool and parameter names) and the template's call-syntax primer;
- *training* requests answered in plain text that repeats their entities ("Noted: ..."), and
  copy drills: the same requests with entities swapped for others of their class, so the base
  learns to copy rather than to remember replies; plus "Repeat:" drills over random entities;
- function calling on made-up practice tools (`practice_tools`), which no workspace tool matches.

It never shows a call to a workspace tool, so the base fails every env0 task: what the adapter
gains (tool choice, parameter names, bodies, when to stop) is what the SFT rows taught it.

Also the oracle conversations used to tune the recipe: each task's oracle played through the real
workspace, in the agent loop's exact message shape.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from typing import Any

from env0_posttrain.spec.runspec import CorpusMix

from env0_posttrain.tasks import Task, build_workspace, company, vocabulary
from env0_posttrain.tasks.vocabulary import entity_classes
from env0_posttrain.train.tiny_student.practice_tools import practice_chats, practice_schemas
from env0_posttrain.train.tiny_student.tokenizer import format_primer, tool_schema_token
from env0_posttrain.workspace import call_tool, openai_tools

FINAL_ANSWER = "Done."


def agent_system_prompt() -> str:
    from env0_posttrain.agent.endpoint import (
        DEFAULT_SYSTEM_PROMPT,  # train may import agent (one-way flow)
    )

    return DEFAULT_SYSTEM_PROMPT


def workspace_text(ws: Any) -> list[str]:
    docs = [f"{p.name} <{p.email}> is {p.title} in {p.department}. Slack: {p.slack_user_id}. {p.first} {p.last}."
            for p in ws.directory]
    docs += [f"#{c.name} is a Slack channel ({c.id})." for c in ws.slack.db.channels.values() if c.name]
    docs += [f"{g.email} is a Google group: {g.name}." for g in ws.admin.db.groups.values()]
    docs += [f"Drive file '{f.name}' ({f.mimeType})." for f in ws.drive.db.files.values()]
    docs += [f"Gmail label {l.name} ({l.id})." for l in ws.gmail.db.labels.values()]
    return docs


def workspace_json(ws: Any, per_kind: int = 40) -> list[str]:
    """Resources as the APIs return them (JSON): key names and value shapes, never a request."""
    state = ws.state()
    docs = []
    for kinds in state.values():
        if not isinstance(kinds, dict):
            continue
        for items in kinds.values():
            if isinstance(items, dict):
                for item in list(items.values())[:per_kind]:
                    if isinstance(item, dict):
                        docs.append(json.dumps(item, ensure_ascii=False, default=str))
    return docs


def calendar_text(ws: Any) -> list[str]:
    """Meeting slots named as people say them ("next Tuesday at 11:00") and as the Calendar API writes them."""
    from env0_posttrain.tasks import pools
    from env0_posttrain.tasks.families.common import rfc3339, slot

    docs = []
    for day in pools.DAYS:
        for hour in pools.HOURS:
            start, end = slot(ws, day, hour, 60)
            half = slot(ws, day, hour, 30)[1]
            docs.append(f"{day} at {hour:02d}:00 is {rfc3339(start)}; {day} {hour:02d}:00-{hour:02d}:59 ends {rfc3339(end)}; "
                        f"half an hour later is {rfc3339(half)}.")
    return docs


def glossary(entities: Sequence[str], corpus: Sequence[Any]) -> list[str]:
    """Entity strings the other documents never mention, so that every whole token is read at least once."""
    text = "\n".join(c for c in corpus if isinstance(c, str))
    missing = [e for e in entities if e not in text]
    return [" ; ".join(missing[i : i + 8]) for i in range(0, len(missing), 8)]


def api_reference(tool_names: Iterable[str]) -> list[str]:
    docs = []
    for tool in openai_tools(sorted(set(tool_names))):
        fn = tool["function"]
        params = ", ".join(fn["parameters"].get("properties", {}))
        # The schema is one token in the prompt: say here which tool it is.
        docs.append(f"{tool_schema_token(tool)} is {fn['name']}: {fn['description']} Parameters: {params}.")
    return docs


def people_emails(ws: Any) -> dict[str, str]:
    """Full names, and first names that are unique in the directory, to email addresses."""
    out = {p.name: p.email for p in ws.directory}
    firsts: dict[str, list[str]] = {}
    for p in ws.directory:
        firsts.setdefault(p.first, []).append(p.email)
    out.update({f: e[0] for f, e in firsts.items() if len(e) == 1})
    return out


def plain_reply(instruction: str, entities: Sequence[str], emails: dict[str, str] | None = None) -> str:
    """An acknowledgement repeating the request's entities in order, a person with their address.

    Copying an entity from the request, and knowing a colleague's address, is company knowledge
    and reading skill; nothing here names a tool or shows the call format.
    """
    found = sorted((instruction.find(e), -len(e), e) for e in entities if len(e) > 2 and e in instruction)
    kept: list[str] = []
    for _, _, e in found:
        if not any(e in k for k in kept):
            kept.append(e)
    emails = emails or {}
    parts = [f"{e} ({emails[e]})" if e in emails and emails[e] not in kept else e for e in kept]
    return "Noted: " + ", ".join(parts) + "." if parts else "Noted."


def swap_entities(text: str, classes: Iterable[Sequence[str]], rng: random.Random) -> str:
    """`text` with each entity (longest match first) replaced by a random member of its class."""
    member = {e: c for c in classes for e in c}
    spans: list[tuple[int, int, str]] = []
    for e in sorted(member, key=len, reverse=True):
        start = text.find(e)
        while start >= 0:
            end = start + len(e)
            if not any(s < end and start < t for s, t, _ in spans):
                spans.append((start, end, e))
            start = text.find(e, end)
    out, last = [], 0
    for start, end, e in sorted(spans):
        out += [text[last:start], rng.choice(member[e])]
        last = end
    return "".join(out) + text[last:]


def copy_drills(train_tasks: Sequence[Task], ws: Any, entities: Sequence[str], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Short chats: a training request with its entities swapped, answered by repeating them.

    Many more requests than the training set holds, so the base learns to *copy* what a request
    names (and a colleague's address) instead of remembering each training request's reply.
    """
    if not train_tasks or n <= 0:
        return []
    rng = random.Random(seed)
    classes = list(entity_classes(ws).values())
    emails = people_emails(ws)
    out = []
    for i in range(n):
        text = swap_entities(train_tasks[i % len(train_tasks)].instruction, classes, rng)
        out.append({"messages": [{"role": "user", "content": text},
                                 {"role": "assistant", "content": plain_reply(text, entities, emails)}]})
    return out


def repeat_drills(entities: Sequence[str], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """"Repeat: a ; b" answered "a ; b" over random entities: copying any whole token, in any order."""
    rng = random.Random(seed)
    pool = [e for e in entities if "\n" not in e and len(e) < 80]
    out = []
    for _ in range(n if pool else 0):
        picked = " ; ".join(rng.sample(pool, rng.randint(1, min(3, len(pool)))))
        out.append({"messages": [{"role": "user", "content": f"Repeat: {picked}"}, {"role": "assistant", "content": picked}]})
    return out


def directory_facts(ws: Any) -> list[str]:
    """Each name a request may use, with its address: the lookup a call argument needs."""
    return [f"{name}'s email is {email}." for name, email in people_emails(ws).items()]


def student_corpus(train_tasks: Sequence[Task], mix: CorpusMix | None = None) -> tuple[list[Any], list[str]]:
    """(pre-training corpus, whole-token entities) for `ensure_tiny_student`, from the training tasks only."""
    mix = mix or CorpusMix()
    ws = company()
    entities = vocabulary(ws)
    tool_names = sorted({n for t in train_tasks for n in t.tools})
    tools = openai_tools(tool_names)
    system = {"role": "system", "content": agent_system_prompt()}
    emails = people_emails(ws)
    corpus: list[Any] = workspace_text(ws) + workspace_json(ws) + calendar_text(ws) + api_reference(tool_names) + [format_primer()] * 3
    for _ in range(mix.request_repeats):
        for task in train_tasks:
            corpus.append(task.instruction)
            corpus.append({"messages": [system, {"role": "user", "content": task.instruction},
                                        {"role": "assistant", "content": plain_reply(task.instruction, entities, emails)}],
                           "tools": openai_tools(task.tools)})
    for _ in range(mix.short_repeats):
        corpus += [{"messages": [{"role": "user", "content": t.instruction},
                                 {"role": "assistant", "content": plain_reply(t.instruction, entities, emails)}]} for t in train_tasks]
    corpus += copy_drills(train_tasks, ws, entities, mix.copy_drills, mix.seed)
    corpus += repeat_drills(entities, mix.repeat_drills, mix.seed)
    corpus += directory_facts(ws) * mix.directory_repeats
    practice = practice_chats(entity_classes(ws), emails, agent_system_prompt(), mix.practice_calls, mix.seed)
    corpus += practice
    corpus += glossary(entities, corpus)
    # Only strings the pre-training text contains: a token the base never read keeps a near-zero
    # embedding, and a LoRA cannot make the model emit it with confidence.
    params = sorted({p for t in tools for p in t["function"]["parameters"].get("properties", {})})
    drills = practice_schemas() if practice else []
    whole = [agent_system_prompt(), *tool_names, *params, *(tool_schema_token(t) for t in [*tools, *drills]),
             *(t["function"]["name"] for t in drills), *entities]
    return corpus, list(dict.fromkeys(whole))


def oracle_row(task: Task) -> dict[str, Any]:
    """The task's oracle played through its workspace, as a TRL row (arguments as dicts)."""
    ws = build_workspace(task)
    messages: list[dict[str, Any]] = [{"role": "system", "content": agent_system_prompt()},
                                      {"role": "user", "content": task.instruction}]
    for i, call in enumerate(task.oracle):
        out = call_tool(ws, call.name, call.arguments)
        cid = f"call_{i}_0"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "name": call.name,
                         "content": json.dumps(out, ensure_ascii=False, default=str)})
    messages.append({"role": "assistant", "content": task.final_answer or FINAL_ANSWER})
    return {"messages": messages, "tools": openai_tools(task.tools)}


def ensure_task_student(cache_dir, train_tasks: Sequence[Task], config=None, mix: CorpusMix | None = None):
    """The tiny student for a task set: corpus and entities from its training tasks, built once."""
    from env0_posttrain.train.tiny_student.build import ensure_tiny_student

    corpus, entities = student_corpus(train_tasks, mix)
    return ensure_tiny_student(cache_dir, corpus, entities, config)
