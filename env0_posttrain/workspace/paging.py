"""Opaque page tokens / Slack cursors (an offset, encoded) and Google partial responses (`fields`)."""

from __future__ import annotations

import base64
from typing import Any, Sequence

from .errors import bad_request, slack_error


def encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def decode_token(token: str | None, *, slack: bool = False) -> int:
    if not token:
        return 0
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        if not raw.startswith("o:"):
            raise ValueError
        off = int(raw[2:])
        if off < 0:
            raise ValueError
        return off
    except Exception:
        if slack:
            raise slack_error("invalid_cursor") from None
        raise bad_request("Invalid page token.", "invalid", "pageToken") from None


def page(items: Sequence[Any], token: str | None, size: int, *, slack: bool = False) -> tuple[list[Any], str | None]:
    off = decode_token(token, slack=slack)
    chunk = list(items[off:off + size])
    nxt = encode_token(off + size) if off + size < len(items) else None
    return chunk, nxt


def check_size(value: int | None, default: int, maximum: int, param: str, minimum: int = 1) -> int:
    if value is None:
        return default
    if value < minimum:
        raise bad_request(f"Invalid value '{value}'. Values must be within the range: [{minimum}, {maximum}]",
                          "invalid", param)
    return min(value, maximum)


# -- partial response: fields="files(id,name),nextPageToken" --------------------------------------
def parse_fields(spec: str) -> dict[str, Any]:
    """Tree of selected fields; {} under a key means the whole subtree."""
    pos = 0

    def parse_list() -> dict[str, Any]:
        nonlocal pos
        out: dict[str, Any] = {}
        while pos < len(spec):
            ch = spec[pos]
            if ch in ", ":
                pos += 1
                continue
            if ch == ")":
                return out
            start = pos
            while pos < len(spec) and spec[pos] not in ",()":
                pos += 1
            path = spec[start:pos].strip().split("/")
            sub: dict[str, Any] = {}
            if pos < len(spec) and spec[pos] == "(":
                pos += 1
                sub = parse_list()
                if pos >= len(spec) or spec[pos] != ")":
                    raise ValueError("unbalanced parentheses")
                pos += 1
            node = out
            for p in path[:-1]:
                node = node.setdefault(p, {})
            node[path[-1]] = sub
        return out

    tree = parse_list()
    if pos != len(spec):
        raise ValueError("unbalanced parentheses")
    return tree


def apply_fields(obj: Any, tree: dict[str, Any]) -> Any:
    if not tree or "*" in tree:
        return obj
    if isinstance(obj, list):
        return [apply_fields(x, tree) for x in obj]
    if not isinstance(obj, dict):
        return obj
    return {k: apply_fields(obj[k], sub) for k, sub in tree.items() if k in obj}


def select_fields(obj: Any, fields: str | None) -> Any:
    if not fields:
        return obj
    try:
        tree = parse_fields(fields)
    except ValueError:
        raise bad_request(f"Invalid field selection {fields}", "invalidParameter", "fields") from None
    return apply_fields(obj, tree)

