"""Helpers for the workspace tests that call tools the way an agent does (no tests here)."""

from __future__ import annotations

from typing import Any

from env0_posttrain.workspace import call_tool


def ok(ws: Any, name: str, args: dict[str, Any]) -> Any:
    """The result of a tool call that must succeed."""
    res = call_tool(ws, name, args)
    assert res["ok"], res
    return res["result"]


def err(ws: Any, name: str, args: dict[str, Any]) -> Any:
    """The error of a tool call that must fail: a Google error object, or a Slack error code."""
    res = call_tool(ws, name, args)
    assert not res["ok"], res
    return res["error"]["error"]
