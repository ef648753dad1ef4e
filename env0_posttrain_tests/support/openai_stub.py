"""A small OpenAI-compatible server (FastAPI + uvicorn on 127.0.0.1, an ephemeral port) for tests.

It plays a vLLM server: `/v1/models` lists what it was told to serve, `/v1/chat/completions`
answers each served name in a chosen way and, when asked `return_token_ids` (vLLM's request
field), returns the ids the tokenizer's chat template gives: top-level `prompt_token_ids` and
per-choice `token_ids`, as vLLM does. Replies come from the registered tasks' oracle plans.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request

REPLY_MODES = ("oracle", "final_text", "call_in_content", "call_in_reasoning")


@dataclass
class StubState:
    models: dict[str, str] = field(default_factory=dict)  # served name -> reply mode
    api_key: str | None = None
    tokenizer: Any = None
    capture_template: str | None = None
    always_return_ids: bool = False  # as env0's local student does, asked or not
    requests: list[dict[str, Any]] = field(default_factory=list)


def _oracle_message(messages: list[dict[str, Any]]) -> dict[str, Any]:
    from env0_posttrain.agent import task_registry
    from env0_posttrain.agent.providers.oracle import next_turn, plan_episode
    from env0_posttrain.agent.providers.base import first_user_text

    task = task_registry.lookup({}, first_user_text(messages))  # the caller's `serve_tasks` block
    pos, turn = next_turn(plan_episode(task, 1.0, 0).turns, messages)
    return turn.message(f"call_{pos}")


def _as_text_call(message: dict[str, Any]) -> str:
    call = (message.get("tool_calls") or [{"function": {"name": "noop", "arguments": "{}"}}])[0]["function"]
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in json.loads(call["arguments"] or "{}").items())
    return f"<tool_call>\n<function={call['name']}>\n{params}</function>\n</tool_call>"


def _reply(mode: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    planned = _oracle_message(messages)
    if mode == "oracle":
        return planned
    if mode == "final_text":
        return {"role": "assistant", "content": "I cannot help with that."}
    if mode == "call_in_content":  # no tool parser: the call stays in the text
        return {"role": "assistant", "content": _as_text_call(planned)}
    if mode == "call_in_reasoning":  # a reasoning parser that never saw </think> took everything
        return {"role": "assistant", "content": None, "reasoning_content": _as_text_call(planned)}
    raise ValueError(mode)


def _ids(state: StubState, messages: list[dict[str, Any]], tools: list | None, reply: dict[str, Any]):
    from env0_posttrain.sft.rows import to_trl_message
    from env0_posttrain.sft.tokens import end_of_turn_id, render_ids

    tok = state.tokenizer
    trl = [to_trl_message(m) for m in messages]
    prompt = render_ids(trl, tools, tok, add_generation_prompt=True, chat_template=state.capture_template)
    full = render_ids([*trl, to_trl_message(reply)], tools, tok, chat_template=state.capture_template)
    start = next((i for i, (a, b) in enumerate(zip(prompt, full)) if a != b), len(prompt))
    out = full[start:]
    eot = end_of_turn_id(tok)
    return prompt, out[: out.index(eot) + 1] if eot in out else out


def make_app(state: StubState) -> FastAPI:
    app = FastAPI()

    def auth(request: Request) -> None:
        if state.api_key and request.headers.get("authorization") != f"Bearer {state.api_key}":
            raise HTTPException(status_code=401, detail="bad key")

    @app.get("/v1/models")
    def models(request: Request) -> dict[str, Any]:
        auth(request)
        return {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "stub"} for m in state.models]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        auth(request)
        body = await request.json()
        state.requests.append(body)
        if body["model"] not in state.models:
            raise HTTPException(status_code=404, detail=f"The model `{body['model']}` does not exist.")
        messages, tools = body["messages"], body.get("tools")
        reply = _reply(state.models[body["model"]], messages)
        choice: dict[str, Any] = {"index": 0, "message": reply,
                                  "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}
        out: dict[str, Any] = {"id": f"chatcmpl-{len(state.requests)}", "object": "chat.completion",
                               "created": int(time.time()), "model": body["model"], "choices": [choice],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        if (body.get("return_token_ids") or state.always_return_ids) and state.tokenizer is not None:
            out["prompt_token_ids"], choice["token_ids"] = _ids(state, messages, tools, reply)
        return out

    return app


class StubServer:
    """`with StubServer(state) as base_url:` serves on 127.0.0.1 at an ephemeral port until the block ends."""

    def __init__(self, state: StubState):
        self.state = state
        self.server = uvicorn.Server(uvicorn.Config(make_app(state), host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("stub server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
