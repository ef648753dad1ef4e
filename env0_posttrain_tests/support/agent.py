"""Shared helpers for the agent tests: a small notes environment behind the TaskEnv seam.

The real workspace and tasks are exercised in agent/test_workspace.py; these helpers keep the loop
tests independent of them and fast.
"""

from __future__ import annotations

import copy
from typing import Any

from env0_posttrain.tasks.model import StateRecipe, Task, ToolCall, VerifierResult

NOTE_TOOLS = {
    "notes_create": {"title": {"type": "string"}, "body": {"type": "string"}},
    "notes_list": {},
    "notes_delete": {"note_id": {"type": "string"}},
}


class NotesWorkspace:
    def __init__(self, notes: dict[str, dict[str, str]]):
        self.notes = notes
        self.next_id = len(notes) + 1


class NotesEnv:
    """A TaskEnv with three tools; tasks ask to create notes (or to report how many exist)."""

    def __init__(self, fail_verify: bool = False):
        self.fail_verify = fail_verify
        self.calls: list[tuple[str, dict]] = []

    def build(self, task: Task) -> NotesWorkspace:
        return NotesWorkspace(copy.deepcopy(task.recipe.items.get("notes", {})))

    def call_tool(self, ws: NotesWorkspace, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, arguments))
        if name == "notes_create":
            if not isinstance(arguments.get("title"), str):
                return {"ok": False, "error": {"code": 400, "message": "title is required"}}
            nid = f"n{ws.next_id}"
            ws.next_id += 1
            ws.notes[nid] = {"title": arguments["title"], "body": str(arguments.get("body", ""))}
            return {"ok": True, "result": {"id": nid}}
        if name == "notes_list":
            return {"ok": True, "result": {"notes": [{"id": k, **v} for k, v in ws.notes.items()]}}
        if name == "notes_delete":
            if ws.notes.pop(arguments.get("note_id"), None) is None:
                return {"ok": False, "error": {"code": 404, "message": "not found"}}
            return {"ok": True, "result": {}}
        return {"ok": False, "error": {"code": 404, "message": f"unknown tool {name}"}}

    def tool_names(self) -> set[str]:
        return set(NOTE_TOOLS)

    def openai_tools(self, names: list[str]) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": n, "description": f"{n.replace('_', ' ')}",
                                                  "parameters": {"type": "object", "properties": NOTE_TOOLS[n]}}}
                for n in names]

    def verify(self, task: Task, start: NotesWorkspace, end: NotesWorkspace, final_answer: str | None) -> VerifierResult:
        if self.fail_verify:
            raise RuntimeError("verifier exploded")
        wanted = task.recipe.items["want_titles"]
        have = {n["title"] for n in end.notes.values()}
        created = sum(t in have for t in wanted) / max(1, len(wanted))
        checks = {"created": created}
        if task.final_answer is not None:
            checks["answer"] = float(final_answer is not None and task.final_answer in final_answer)
        extra = len(end.notes) - len(start.notes) - len(wanted)
        reward = min(checks.values()) if extra <= 0 else 0.0
        return VerifierResult(reward=reward, checks=checks)


def notes_task(i: int, titles: list[str] | None = None, answer: bool = False) -> Task:
    titles = titles if titles is not None else [f"note {i}-a", f"note {i}-b"]
    oracle = [ToolCall(name="notes_create", arguments={"title": t, "body": f"body of {t}"}) for t in titles]
    final = None
    if answer:
        oracle = [ToolCall(name="notes_list", arguments={}), *oracle]
        final = "1"
    return Task(id=f"notes-{i}", family="docs", template_id="notes", difficulty=max(1, len(oracle)),
                instruction=f"Create the notes {', '.join(titles)} (task {i})." + (" How many notes were there?" if answer else ""),
                recipe=StateRecipe(seed=i, items={"notes": {"n0": {"title": "old", "body": ""}} if answer else {},
                                                  "want_titles": titles}),
                oracle=oracle, final_answer=final, tools=sorted(NOTE_TOOLS))


def build_tiny_student(dest, seed: int = 0) -> None:
    """A random tiny Qwen3 with a locally trained byte-level BPE and the Qwen3.5 no-think template.

    The template is TRL's packaged one, byte for byte, so TRL's response parser recognises it.
    """
    from pathlib import Path

    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, Qwen3Config
    from trl.chat_template_utils import qwen3_5_nothink_chat_template

    dest = Path(dest)
    corpus = [qwen3_5_nothink_chat_template, "notes_create notes_list notes_delete title body note_id",
              '{"ok": true, "result": {"id": "n1"}} <tool_call>\n<function=notes_create>\n<parameter=title>\n',
              "Create the notes note 1-a, note 1-b. How many notes were there? Done."] * 4
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(corpus, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tok.add_tokens(["<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_response>", "</tool_response>"])
    tok.chat_template = qwen3_5_nothink_chat_template
    tok.save_pretrained(dest)
    torch.manual_seed(seed)
    config = Qwen3Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=8192,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True)
    AutoModelForCausalLM.from_config(config).save_pretrained(dest)


def read_jsonl_episodes(path) -> list[dict]:
    """Rows of a JSONL episode sink; a line cut by a kill is skipped (that episode simply runs again)."""
    import json
    import os

    rows = []
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def resume_worker(out: str, n_tasks: int = 12, backend: str = "processes") -> dict:
    """Real-workspace rollouts that append each finished episode to `out` (one write + fsync) and skip
    those already there: the store's contract, with a JSONL file standing in for DuckDB. `backend` is scale.backend
    (ray: Ray actors play, this process writes; a local Ray is started unless this process is connected to one)."""
    import json
    import os

    from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync

    done = {tuple(r["key"]) for r in read_jsonl_episodes(out)}

    def store(ep) -> None:
        line = json.dumps({"key": list(ep.key), "episode": ep.model_dump(mode="json")}) + "\n"
        fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    from env0_posttrain.spec.scale import ScaleSpec
    from env0_posttrain.tasks import generate_tasks

    tasks = generate_tasks(0, per_template=1)[:n_tasks]
    settings = AgentSettings(max_steps=40, concurrency=2, scale=ScaleSpec(backend=backend))
    s = run_rollouts_sync(tasks, "teacher", 1, oracle_endpoint(latency_s=0.15), settings, "resume-run", done, store,
                          progress=False)
    return {"skipped": s.skipped, "completed": s.completed}
