"""Remote models through litellm's real HTTP clients: an OpenAI-compatible server on loopback
answering like vLLM (`return_token_ids`), reached as `hosted_vllm/...` and `openai/...`."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
from fastapi import Request

from env0_posttrain.agent import AgentSettings, FatalModelError, ModelEndpoint, run_episode
from env0_posttrain_tests.support.agent import NotesEnv, notes_task


@pytest.fixture(scope="module")
def server():
    import uvicorn
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    app = FastAPI()
    state = {"requests": [], "fail_next": []}

    @app.post("/v1/chat/completions")
    async def chat(req: Request):
        body = await req.json()
        state["requests"].append({"body": body, "auth": req.headers.get("authorization")})
        if state["fail_next"]:
            status = state["fail_next"].pop(0)
            kind = "rate_limit_error" if status == 429 else "server_error"
            return JSONResponse({"error": {"message": f"HTTP {status}", "type": kind}}, status_code=status)
        done = any(m["role"] == "tool" for m in body["messages"])
        message = ({"role": "assistant", "content": "created"} if done else
                   {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                       "name": "notes_create", "arguments": '{"title": "note 1-a"}'}}]})
        return {"id": "x", "object": "chat.completion", "created": 1, "model": body["model"],
                "prompt_token_ids": [1, 2, 3],
                "choices": [{"index": 0, "finish_reason": "stop" if done else "tool_calls", "token_ids": [7, 8],
                             "message": message}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    while not srv.started:
        time.sleep(0.02)
    state["base"] = f"http://127.0.0.1:{port}/v1"
    yield state
    srv.should_exit = True
    th.join(timeout=5)


def episode(endpoint, settings=AgentSettings(max_steps=3, backoff_base_s=0.01)):
    return asyncio.run(run_episode(notes_task(1, titles=["note 1-a"]), endpoint, settings, "base", 0, "r", env=NotesEnv()))


def test_hosted_vllm_with_token_ids(server):
    ep = episode(ModelEndpoint(model="hosted_vllm/Qwen/Qwen3.5-9B", api_base=server["base"], temperature=0.2,
                               max_tokens=64, extra={"extra_body": {"return_token_ids": True}}))
    assert ep.stop_condition == "agent_completed" and ep.passed and ep.final_answer == "created"
    ex = ep.exchanges[0]
    assert ex.prompt_token_ids == [1, 2, 3] and ex.completion_token_ids == [7, 8]
    assert ex.usage.prompt_tokens == 3 and ex.finish_reason == "tool_calls"
    body = server["requests"][-1]["body"]
    assert body["model"] == "Qwen/Qwen3.5-9B" and body["return_token_ids"] is True
    assert body["temperature"] == 0.2 and body["max_tokens"] == 64
    assert [t["function"]["name"] for t in body["tools"]] == sorted(["notes_create", "notes_delete", "notes_list"])
    assert body["messages"][-1]["role"] == "tool" and "metadata" not in body


def test_openai_prefix_reads_the_key_from_the_named_env_var(server, monkeypatch):
    monkeypatch.setenv("ENV0_FAKE_KEY", "sk-local-test")
    ep = episode(ModelEndpoint(model="openai/served-model", api_base=server["base"], api_key_env="ENV0_FAKE_KEY"))
    assert ep.passed and server["requests"][-1]["auth"] == "Bearer sk-local-test"


def test_server_429_and_503_are_retried_as_infra(server, monkeypatch):
    monkeypatch.setenv("ENV0_FAKE_KEY", "sk-local-test")
    server["fail_next"] = [429, 503]
    ep = episode(ModelEndpoint(model="openai/served-model", api_base=server["base"], api_key_env="ENV0_FAKE_KEY",
                               extra={"max_retries": 0}))
    assert ep.passed and ep.error_counts == {"rate_limit": 1, "server_error": 1} and ep.infra_errors == 2
    assert ep.exchanges[0].attempts == 3


def test_missing_credentials_are_fatal_not_retried(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(FatalModelError, match="authentication"):
        episode(ModelEndpoint(model="openai/served-model", api_base=server["base"]))
