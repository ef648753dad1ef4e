"""The workspace tools through a real MCP client session (in process)."""

from __future__ import annotations

import asyncio
import json

from mcp import Client

from env0_posttrain.workspace import TOOLS, Workspace
from env0_posttrain.workspace.mcp_server import create_mcp_server


def test_mcp_lists_and_calls_the_same_tools():
    ws = Workspace.seeded(0)
    server = create_mcp_server(lambda: ws, ["slack_chat_postMessage", "gmail_messages_get"])

    async def session():
        async with Client(server) as client:
            listed = await client.list_tools()
            ok = await client.call_tool("slack_chat_postMessage", {"channel": "general", "text": "via mcp"})
            bad = await client.call_tool("gmail_messages_get", {"id": "nope"})
            return listed, ok, bad

    listed, ok, bad = asyncio.run(session())
    assert {t.name for t in listed.tools} == {"slack_chat_postMessage", "gmail_messages_get"}
    tool = next(t for t in listed.tools if t.name == "slack_chat_postMessage")
    assert tool.input_schema == TOOLS["slack_chat_postMessage"].parameters
    assert not ok.is_error and json.loads(ok.content[0].text)["ok"] is True
    assert ws.slack.history("general")[-1].text == "via mcp"
    assert bad.is_error and json.loads(bad.content[0].text)["error"]["code"] == 404
    assert ws.action_log[-1]["source"] == "mcp"
