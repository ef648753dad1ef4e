"""The workspace tools over MCP (Model Context Protocol), for agents that speak MCP instead of OpenAI tools.

Same tool names, schemas and handlers as `openai_tools` / `call_tool`; an API error comes back as a
tool result with isError set and the API's error body as its text.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .environment import Workspace
from .tools import TOOLS, call_tool


def create_mcp_server(get_workspace: Callable[[], Workspace], tools: list[str] | None = None) -> Any:
    """An `mcp.server.Server` exposing `tools` (default: all); serve it with any MCP transport,
    e.g. `server.streamable_http_app()` under uvicorn, or connect in process with `mcp.Client(server)`."""
    from mcp import types
    from mcp.server import Server

    names = list(tools) if tools is not None else list(TOOLS)
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise KeyError(f"unknown workspace tools: {unknown}")
    listing = [types.Tool(name=n, description=TOOLS[n].description, input_schema=TOOLS[n].parameters,
                          annotations=types.ToolAnnotations(read_only_hint=not TOOLS[n].writes))
               for n in names]

    async def on_list_tools(_ctx: Any, _params: Any) -> Any:
        return types.ListToolsResult(tools=listing)

    async def on_call_tool(_ctx: Any, params: Any) -> Any:
        if params.name not in names:
            res = {"ok": False, "error": {"error": {"code": 404, "message": f"Unknown tool: {params.name!r}",
                                                    "status": "NOT_FOUND"}}}
        else:
            res = call_tool(get_workspace(), params.name, params.arguments or {}, source="mcp")
        payload = res["result"] if res["ok"] else res["error"]
        text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        structured = payload if isinstance(payload, dict) else None
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=structured, is_error=not res["ok"])

    return Server("env0-posttrain-workspace", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
