"""The stuck detector: an episode whose model makes the same tool calls with the same arguments N turns in a row
ends there, with the stop condition `stuck` and the repeated call named in its error.

OpenHands' agent controller stops on the same action with the same observation four times in a row, or the same
action ending in an error three times; here the repeated call is enough (its result is the same workspace answer,
or a write repeated). Repeats that are not in a row (A, B, A, B) are left to the step limit. Arguments are
compared as parsed JSON, so key order and spacing do not hide a repeat. Off for the teacher arms: a recorded
solve.sh may poll the same endpoint several times in a row.
"""

from __future__ import annotations

import json
from typing import Any


def _call_key(call: dict[str, Any]) -> tuple[str, str]:
    fn = call.get("function") or {}
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (json.JSONDecodeError, TypeError, RecursionError):
            pass  # compared as the raw string: a garbled reply repeated is still a repeat
    return str(fn.get("name") or ""), json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


class StuckDetector:
    """Feed it each assistant turn's tool calls; it says why the episode is stuck once the same turn came
    `after` times in a row (never when `after` is None)."""

    def __init__(self, after: int | None):
        self.after = after
        self._last: tuple | None = None
        self._run = 0

    def observe(self, tool_calls: list[dict[str, Any]]) -> str | None:
        key = tuple(_call_key(c) for c in tool_calls)
        self._run = self._run + 1 if key == self._last else 1
        self._last = key
        if self.after is None or self._run < self.after:
            return None
        name, args = key[0] if len(key) == 1 else (", ".join(k[0] for k in key), "")
        shown = f" {args[:200]}" if args else ""
        return f"stuck: the same call {name}{shown} {self._run} turns in a row"
