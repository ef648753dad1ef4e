"""Function calling in general, on made-up tools: what any pretrained chat model has read.

A real base model (Qwen3.5-9B) has seen tool calls and can copy a request's names into call
arguments; what SFT teaches it is *this* workspace: which of its tools to call, their parameter
names, the bodies they take, when to stop. The tiny student's pre-training gives it the general
skill on a handful of practice tools that do not exist in the workspace (their names can never
match a workspace tool), in the same chat template, so the base still fails every env0 task
while the adapter can build on a copy skill that already works inside a call.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from env0_posttrain.workspace import TOOLS

Slots = Mapping[str, str]


@dataclass(frozen=True)
class PracticeTool:
    name: str
    description: str
    params: dict[str, str]  # parameter -> JSON type ("string" or "object")
    requests: tuple[str, ...]  # phrasings with {slot} fields
    slots: dict[str, str]  # slot -> entity class (or "person": a name resolved to an address)
    arguments: Callable[[Slots], dict[str, Any]]

    def schema(self) -> dict[str, Any]:
        props = {p: {"type": t, "description": p.replace("_", " ")} for p, t in self.params.items()}
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": {"type": "object", "properties": props,
                                                                "required": list(self.params)}}}


PRACTICE_TOOLS: tuple[PracticeTool, ...] = (
    PracticeTool(
        "reminders_add", "Add a reminder for a person.", {"person": "string", "topic": "string"},
        ("Remind {person} about {topic}.", "Set a reminder for {person}: {topic}."),
        {"person": "person", "topic": "event_title"}, lambda s: {"person": s["person@"], "topic": s["topic"]},
    ),
    PracticeTool(
        "notes_save", "Save a note.", {"title": "string", "text": "string"},
        ('Save a note called {title} that says "{text}".', 'Jot down "{text}" under {title}.'),
        {"title": "doc_title", "text": "phrase"}, lambda s: {"title": s["title"], "text": s["text"]},
    ),
    PracticeTool(
        "badges_print", "Print a visitor badge.", {"holder": "string", "room": "string"},
        ("Print a badge for {holder} to use in {room}.", "{holder} needs a badge for {room}; print one."),
        {"holder": "person", "room": "location"}, lambda s: {"holder": s["holder@"], "room": s["room"]},
    ),
    PracticeTool(
        "tags_apply", "Tag a mailing list.", {"list": "string", "tag": "string"},
        ("Tag {list} as {tag}.", "Put the {tag} tag on {list}."),
        {"list": "group_email", "tag": "label"}, lambda s: {"list": s["list"], "tag": s["tag"]},
    ),
    PracticeTool(
        "tickets_open", "Open a help-desk ticket.", {"body": "object"},
        ('Open a ticket for {owner} titled "{subject}": {details}.', 'File "{subject}" for {owner}: {details}.'),
        {"owner": "person", "subject": "subject", "details": "phrase"},
        lambda s: {"body": {"assignee": s["owner@"], "subject": s["subject"], "details": s["details"]}},
    ),
    PracticeTool(
        "pins_add", "Pin a message in a channel.", {"channel": "string", "text": "string"},
        ('Pin "{text}" in {channel}.', 'In {channel}, pin this: {text}.'),
        {"channel": "channel", "text": "phrase"}, lambda s: {"channel": s["channel"], "text": s["text"]},
    ),
    PracticeTool(
        "shares_grant", "Share a folder with a person.", {"body": "object"},
        ("Share the {folder} folder with {friend}.", "Give {friend} access to {folder}."),
        {"folder": "folder", "friend": "person"}, lambda s: {"body": {"folder": s["folder"], "with": s["friend@"]}},
    ),
    PracticeTool(
        "rooms_book", "Book a room.", {"body": "object"},
        ("Book {room} {day} for {event}.", "Reserve {room} for {event} {day}."),
        {"room": "location", "day": "day", "event": "event_title"},
        lambda s: {"body": {"room": s["room"], "when": s["day"], "title": s["event"]}},
    ),
)
assert not {t.name for t in PRACTICE_TOOLS} & set(TOOLS), "practice tools must never shadow a workspace tool"


def practice_schemas() -> list[dict[str, Any]]:
    return [t.schema() for t in PRACTICE_TOOLS]


def practice_chats(classes: Mapping[str, Sequence[str]], people: Mapping[str, str], system_prompt: str, n: int,
                   seed: int = 0) -> list[dict[str, Any]]:
    """`n` episodes on practice tools: request, one call copying its entities, an ok result, "Done."."""
    rng = random.Random(seed)
    names = sorted(people)
    out = []
    for i in range(n):
        tool = PRACTICE_TOOLS[i % len(PRACTICE_TOOLS)]
        slots: dict[str, str] = {}
        for slot, kind in tool.slots.items():
            if kind == "person":
                slots[slot] = rng.choice(names)
                slots[f"{slot}@"] = people[slots[slot]]
            else:
                slots[slot] = rng.choice(list(classes[kind]))
        request = rng.choice(tool.requests).format(**slots)
        cid = f"call_{i}"
        out.append({
            "messages": [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": request[0].upper() + request[1:]},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": cid, "type": "function", "function": {"name": tool.name, "arguments": tool.arguments(slots)}}]},
                {"role": "tool", "tool_call_id": cid, "name": tool.name,
                 "content": json.dumps({"ok": True, "result": {"id": f"{rng.getrandbits(48):012x}"}})},
                {"role": "assistant", "content": "Done."},
            ],
            "tools": _tools_for(tool, rng),
        })
    return out


def _tools_for(tool: PracticeTool, rng: random.Random) -> list[dict[str, Any]]:
    """The called tool among two distractors, in random order, as a task offers a few tools."""
    others = rng.sample([t for t in PRACTICE_TOOLS if t is not tool], 2)
    chosen = [tool, *others]
    rng.shuffle(chosen)
    return [t.schema() for t in chosen]
