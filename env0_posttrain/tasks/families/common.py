"""Small helpers every family uses: picking people, building calls, finding planted items."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from env0_posttrain.tasks.model import ToolCall
from env0_posttrain.tasks.pools import DAY_OFFSETS


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def others(ws: Any) -> list[Any]:
    """Everyone in the directory but the agent's own user, in directory order."""
    me = ws.me.email
    return [p for p in ws.directory if p.email != me]


def pick_people(rng: random.Random, ws: Any, k: int = 1) -> list[Any]:
    return rng.sample(others(ws), k)


def person_params(p: Any, prefix: str = "") -> dict[str, str]:
    """The strings an instruction may use for a person (name, first name, email)."""
    return {f"{prefix}name": p.name, f"{prefix}first": p.first, f"{prefix}email": p.email}


def slot(ws: Any, day: str, hour: int, minutes: int = 60) -> tuple[datetime, datetime]:
    """A meeting slot named relative to the frozen clock ("tomorrow", "next Monday" ...)."""
    base = ws.now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=DAY_OFFSETS[day])
    start = base.replace(hour=hour)
    return start, start + timedelta(minutes=minutes)


def rfc3339(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def hours_ago(ws: Any, hours: float) -> datetime:
    return ws.now - timedelta(hours=hours)


class Script:
    """A scripted agent for oracles: each call runs on the planted workspace and its result is
    used by the next, exactly as an agent would use ids returned by earlier calls."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.calls: list[ToolCall] = []

    def __call__(self, name: str, /, **arguments: Any) -> Any:
        from env0_posttrain.tasks.template import OracleError
        from env0_posttrain.workspace import call_tool

        out = call_tool(self.ws, name, arguments)
        if not out.get("ok"):
            raise OracleError(f"oracle call {name}({arguments}) refused: {out.get('error')}")
        self.calls.append(ToolCall(name=name, arguments=arguments))
        return out["result"]
