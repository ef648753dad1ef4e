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


def assert_not_a_server_error(name: str, args: dict[str, Any], res: dict[str, Any]) -> None:
    """A failed call must be the caller's fault (4xx), in its service's own error shape: Stripe's `type` other than
    api_error, Slack's code other than internal_error, the auth server's RFC 6749 string (or env0's console
    `detail`), else Google's `code` below 500."""
    if res["ok"]:
        return
    err = res["error"]
    if name.startswith("stripe_"):
        assert err["error"]["type"] != "api_error", (name, args, err)
    elif err.get("ok") is False:  # Slack
        assert err["error"] != "internal_error", (name, args, err)
    elif name.startswith("auth_") and (isinstance(err.get("error"), str) or "detail" in err):
        return  # the auth server's internal error is Google-shaped like every service's: it reaches the check below
    else:
        assert err["error"]["code"] < 500, (name, args, err)
