"""Helpers for the reverse-KL tests: the notes teacher's SFT rows, and a vLLM-shaped log-prob server that serves the
real log-probabilities of a local model (so a test checks ServerTeacher's parsing and checks, not a canned answer),
with switches that make its replies hostile the ways a real server's can be."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

from env0_posttrain_tests.support.agent import NotesEnv, notes_task


def notes_teacher_rows(n: int = 6) -> list[dict[str, Any]]:
    """The notes tasks' oracle played as TRL rows (arguments as dicts), as the teacher's SFT rows would be."""
    env, rows = NotesEnv(), []
    for i in range(1, n + 1):
        task = notes_task(i)
        ws = env.build(task)
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                          {"role": "user", "content": task.instruction}]
        for j, call in enumerate(task.oracle):
            out = env.call_tool(ws, call.name, call.arguments)
            cid = f"call_{j}"
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]})
            messages.append({"role": "tool", "tool_call_id": cid, "name": call.name, "content": json.dumps(out)})
        messages.append({"role": "assistant", "content": "Both notes are created."})
        rows.append({"messages": messages, "tools": env.openai_tools(task.tools)})
    return rows


@dataclass
class FakeVLLM:
    """The state of the fake server: the model scoring prompts, and how its next replies misbehave."""

    teacher: Any  # a LocalTeacher: its `score` is the server's forward pass
    # None | wrong_count | nan | positive | other_ids | no_choices | status_500 | not_json | endless (a streamed body
    # that never ends) | huge_declared (a real reply padded past what its ids can need, its Content-Length saying so)
    sabotage: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)


def _reply(state: FakeVLLM, body: dict[str, Any]) -> Any:
    ids = list(body["prompt"])
    [score] = state.teacher.score([ids])
    values: list[float | None] = [None, *score.logprobs]
    sent = list(ids)
    if state.sabotage == "wrong_count":  # one log-probability short (the echoed tokens stay complete)
        values = values[:-1]
        sent = sent + [0]
    elif state.sabotage == "nan":
        values[len(values) // 2] = math.nan
    elif state.sabotage == "positive":
        values[1] = 0.5
    elif state.sabotage == "other_ids":
        sent[-1] = (sent[-1] + 1) % len(state.teacher.tokenizer)
    if body.get("prompt_logprobs") is not None:
        entries = [None] + [{str(t): {"logprob": v, "rank": 1, "decoded_token": state.teacher.tokenizer.decode([t])}}
                            for t, v in zip(sent[1:len(values)], values[1:])]
        choice = {"index": 0, "text": "x", "prompt_logprobs": entries, "finish_reason": "length"}
    else:
        tokens = [f"token_id:{t}" for t in sent[:len(ids)]] + ["token_id:0"]
        choice = {"index": 0, "text": "x", "finish_reason": "length",
                  "logprobs": {"tokens": tokens, "token_logprobs": values + [-0.1], "top_logprobs": None,
                               "text_offset": list(range(len(tokens)))}}
    choices = [] if state.sabotage == "no_choices" else [choice]
    return {"id": "cmpl-1", "object": "text_completion", "created": int(time.time()), "model": body["model"],
            "choices": choices, "usage": {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1}}


async def _endless():
    """A reply that starts like vLLM's and never ends: 64 KiB of log-probability entries at a time."""
    yield b'{"choices": [{"index": 0, "prompt_logprobs": [null'
    chunk = b', {"1": {"logprob": -1.0, "rank": 1}}' * 1800
    while True:
        yield chunk
        await asyncio.sleep(0)


def make_app(state: FakeVLLM) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/completions")
    async def completions(request: Request) -> Any:
        body = await request.json()
        state.requests.append(body)
        if state.sabotage == "status_500":
            return JSONResponse({"error": "engine dead"}, status_code=500)
        if state.sabotage == "not_json":
            return PlainTextResponse("<html>gateway</html>")
        if state.sabotage == "endless":
            return StreamingResponse(_endless(), media_type="application/json")
        if state.sabotage == "huge_declared":
            reply = _reply(state, body)
            reply["padding"] = "x" * (2 * 2**20 + 1024 * len(body["prompt"]))
            return JSONResponse(reply)
        # JSON has no NaN: encode it the way Python's json (and a careless server) does
        return PlainTextResponse(json.dumps(_reply(state, body)), media_type="application/json")

    return app


class FakeVLLMServer:
    """`with FakeVLLMServer(state) as base_url:` serves on 127.0.0.1 at an ephemeral port until the block ends."""

    def __init__(self, state: FakeVLLM):
        self.server = uvicorn.Server(uvicorn.Config(make_app(state), host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("fake vLLM server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def small_teacher_spec(steps: int = 12):
    """A tiny teacher that builds in seconds, still larger than `build_tiny_student`'s student (hidden 64, 2 layers)."""
    from env0_posttrain.spec.onpolicy_kl import TinyTeacherSpec

    return TinyTeacherSpec(hidden_size=96, num_layers=3, num_heads=4, num_kv_heads=2, intermediate_size=192,
                           train_steps=steps, batch_size=4, max_seq_len=512, learning_rate=3e-3)


SYSTEM_PROMPT = "You are a helpful agent."  # short: the tiny test tokenizer spells long prose out nearly byte by byte


def small_student_spec():
    """A student trained briefly on the same rows: a random tiny base keeps near-uniform outputs that a LoRA cannot
    sharpen (its logits are bounded by the final norm and the small random embeddings), as FIELD-NOTES says."""
    from env0_posttrain.spec.onpolicy_kl import TinyTeacherSpec

    return TinyTeacherSpec(hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, intermediate_size=128,
                           train_steps=6, batch_size=4, max_seq_len=512, learning_rate=3e-3, seed=1)


def student_and_teacher(root) -> tuple[Any, Any]:
    """(tiny student dir, larger tiny teacher dir) under `root`, both on one locally trained tokenizer."""
    from pathlib import Path

    from env0_posttrain.train.reverse_kl.tiny_teacher import ensure_tiny_teacher
    from env0_posttrain_tests.support.agent import build_tiny_student

    root = Path(root)
    build_tiny_student(root / "base")
    rows = notes_teacher_rows()
    student = ensure_tiny_teacher(root / "students", root / "base", rows, small_student_spec())
    return student, ensure_tiny_teacher(root / "cache", root / "base", rows, small_teacher_spec())
