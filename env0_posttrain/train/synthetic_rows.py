"""Synthetic agent conversations in exactly the harness's TRL row shape, for tests and tuning.

They mirror what the SFT engineer emits (system prompt, compact tool schemas, user instruction,
assistant tool call with dict arguments, tool result, final answer) over a closed vocabulary of
entities, and split train / eval by *combination*, so an eval row is never a training row.
They are not the demo's tasks: the real ones come from `env0_posttrain.tasks`.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from typing import Any

from env0_posttrain.train.tiny_student.tokenizer import format_primer

SYSTEM = "You are the Acme Corp workspace assistant. Use the tools to do what the user asks, then reply briefly."
FIRST = ["ana", "ben", "chloe", "dev", "emma", "farid", "grace", "hugo", "iris", "jon", "kira", "liam"]
LAST = ["ito", "khan", "lopez", "moreau", "novak", "okafor"]
CHANNELS = ["general", "eng", "design", "sales", "support", "random", "ops", "launch"]
LABELS = ["Label_urgent", "Label_billing", "Label_travel", "Label_hiring", "Label_legal", "Label_followup"]
FILES = {f"file_{k}": v for k, v in zip("abcdefghij", ["Q3 plan", "budget", "roadmap", "offsite agenda", "hiring plan",
                                                      "launch brief", "style guide", "OKRs", "board deck", "runbook"])}
ROLES = ["reader", "commenter", "writer"]
NOTES = ["standup moved to 10", "deploy is done", "please review the doc", "lunch is on me",
         "the demo went well", "offsite is confirmed"]


def _fn(name: str, desc: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": desc,
            "parameters": {"type": "object", "properties": props, "required": required}}}


S = {"type": "string"}
TOOLS = [
    _fn("gmail_messages_send", "Send an email.", {"to": S, "subject": S, "body_text": S}, ["to", "subject", "body_text"]),
    _fn("slack_chat_postMessage", "Post to a Slack channel.", {"channel": S, "text": S}, ["channel", "text"]),
    _fn("drive_permissions_create", "Share a Drive file.", {"fileId": S, "body": {"type": "object"}}, ["fileId", "body"]),
    _fn("gmail_messages_modify", "Add labels to a message.", {"id": S, "addLabelIds": {"type": "array"}}, ["id", "addLabelIds"]),
    _fn("slack_users_lookupByEmail", "Find a Slack user.", {"email": S}, ["email"]),
]


@dataclass
class SyntheticSet:
    train: list[dict[str, Any]]
    eval: list[dict[str, Any]]
    corpus: list[Any] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)


def _people() -> list[tuple[str, str]]:
    return [(f"{f.title()} {l.title()}", f"{f}.{l}@acme.test") for f, l in itertools.product(FIRST, LAST)]


def _task(rng: random.Random, kind: int) -> tuple[str, str, dict[str, Any], str]:
    name, email = rng.choice(_people())
    if kind == 0:
        note = rng.choice(NOTES)
        return (f"Email {name} ({email}) with the subject 'Update' saying: {note}.", "gmail_messages_send",
                {"to": email, "subject": "Update", "body_text": note}, f"Sent the update to {name}.")
    if kind == 1:
        ch, note = rng.choice(CHANNELS), rng.choice(NOTES)
        return (f"Tell #{ch} on Slack: {note}.", "slack_chat_postMessage", {"channel": ch, "text": note}, f"Posted in #{ch}.")
    if kind == 2:
        fid, role = rng.choice(list(FILES)), rng.choice(ROLES)
        return (f"Give {email} {role} access to the {FILES[fid]} ({fid}).", "drive_permissions_create",
                {"fileId": fid, "body": {"role": role, "type": "user", "emailAddress": email}}, f"Shared it with {name}.")
    if kind == 3:
        mid, label = f"msg_{rng.randrange(100, 999)}", rng.choice(LABELS)
        return (f"Label message {mid} with {label}.", "gmail_messages_modify",
                {"id": mid, "addLabelIds": [label]}, f"Labelled {mid}.")
    return (f"What is the Slack user of {email}?", "slack_users_lookupByEmail", {"email": email}, f"{name} is on Slack.")


def synthetic_row(instruction: str, tool: str, args: dict[str, Any], answer: str) -> dict[str, Any]:
    result = json.dumps({"ok": True, "tool": tool})
    return {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": instruction},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": tool, "arguments": args}}]},
            {"role": "tool", "tool_call_id": "call_0", "name": tool, "content": result},
            {"role": "assistant", "content": answer},
        ],
        "tools": TOOLS,
    }


def make_synthetic_set(n_train: int = 300, n_eval: int = 60, seed: int = 0) -> SyntheticSet:
    """Rows split by instruction, plus a pre-training corpus that never shows a tool call."""
    rng = random.Random(seed)
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    attempts = 0
    while len(rows) < n_train + n_eval:
        attempts += 1
        if attempts > 100 * (n_train + n_eval):
            raise ValueError(f"cannot draw {n_train + n_eval} distinct synthetic tasks")
        instruction, tool, args, answer = _task(rng, rng.randrange(5))
        if instruction not in seen:
            seen.add(instruction)
            rows.append(synthetic_row(instruction, tool, args, answer))
    rng.shuffle(rows)
    people = _people()
    corpus: list[Any] = [f"{n} <{e}> works at Acme Corp." for n, e in people]
    corpus += [f"#{c} is a Slack channel at Acme." for c in CHANNELS]
    corpus += [f"{fid} is the {title}." for fid, title in FILES.items()]
    for row in rows[:n_train]:  # chat turns with plain-text replies: the format, minus the tool calls
        msgs = row["messages"]
        corpus.append({"messages": [msgs[0], msgs[1], {"role": "assistant", "content": msgs[4]["content"]}], "tools": TOOLS})
        corpus.append(msgs[1]["content"])
    for t in TOOLS:  # the API reference, in prose: names and parameters, never a call
        fn = t["function"]
        corpus.append(f"{fn['name']}: {fn['description']} Parameters: {', '.join(fn['parameters']['properties'])}.")
    corpus += [format_primer()] * 5
    entities = [e for _, e in people] + CHANNELS + LABELS + list(FILES) + NOTES + [t["function"]["name"] for t in TOOLS]
    entities += [json.dumps(t, ensure_ascii=False) for t in TOOLS]
    entities += sorted({p for t in TOOLS for p in t["function"]["parameters"]["properties"]})
    return SyntheticSet(train=rows[:n_train], eval=rows[n_train:], corpus=corpus, entities=entities)
